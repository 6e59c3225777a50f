//! wasmi-oracle: runs one wasm32-wasip1 command module on wasmi 1.1.0 configured as
//! CharmsDev/charms `charms-app-runner` configures it (Config::default(), consume_fuel(true),
//! CompilationMode::Lazy, a 1e9 fuel budget, its six WASI host functions, stdin served from a
//! buffer, random_get from ChaCha12 seeded with a 32-byte seed) and prints one JSON line:
//! {"fuel":N,"verdict":"ok"|"trap"|"out_of_fuel"|"invalid","error":"..."}
//!
//! Usage: wasmi-oracle [--fuel N] [--seed HEX64] MODULE.wasm [STDIN-FILE]
//!        wasmi-oracle --batch [--fuel N]   (reads lines "MODULE.wasm<TAB>STDIN-FILE<TAB>SEED<TAB>FUEL", the last three may be empty)
//! `fuel` is budget minus the fuel left when the run ended, however it ended.
use std::io::{BufRead, Write};
use wasmi::{Caller, CompilationMode, Config, Engine, Extern, Linker, Module, Store, TrapCode};

struct Host {
    stdin: Vec<u8>,
    stderr: Vec<u8>,
    rng: ChaCha12,
}

/// rand 0.10 `StdRng`: ChaCha12, key = seed, 64-bit counter from 0, 4 blocks per refill,
/// `fill_bytes` consuming whole 32-bit little-endian words.
struct ChaCha12 {
    key: [u32; 8],
    counter: u64,
    buf: [u32; 64],
    index: usize,
}

impl ChaCha12 {
    fn new(seed: [u8; 32]) -> Self {
        let mut key = [0u32; 8];
        for (i, k) in key.iter_mut().enumerate() {
            *k = u32::from_le_bytes(seed[i * 4..i * 4 + 4].try_into().unwrap());
        }
        Self { key, counter: 0, buf: [0; 64], index: 64 }
    }
    fn refill(&mut self) {
        for b in 0..4 {
            let mut s = [0u32; 16];
            s[0] = 0x61707865;
            s[1] = 0x3320646e;
            s[2] = 0x79622d32;
            s[3] = 0x6b206574;
            s[4..12].copy_from_slice(&self.key);
            s[12] = self.counter as u32;
            s[13] = (self.counter >> 32) as u32;
            let mut x = s;
            for _ in 0..6 {
                qr(&mut x, 0, 4, 8, 12);
                qr(&mut x, 1, 5, 9, 13);
                qr(&mut x, 2, 6, 10, 14);
                qr(&mut x, 3, 7, 11, 15);
                qr(&mut x, 0, 5, 10, 15);
                qr(&mut x, 1, 6, 11, 12);
                qr(&mut x, 2, 7, 8, 13);
                qr(&mut x, 3, 4, 9, 14);
            }
            for i in 0..16 {
                self.buf[b * 16 + i] = x[i].wrapping_add(s[i]);
            }
            self.counter = self.counter.wrapping_add(1);
        }
        self.index = 0;
    }
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(4) {
            if self.index >= 64 {
                self.refill();
            }
            let w = self.buf[self.index].to_le_bytes();
            self.index += 1;
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

fn qr(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

type R<T> = Result<T, String>;

fn memory(caller: &mut Caller<'_, Host>) -> R<wasmi::Memory> {
    caller.get_export("memory").and_then(Extern::into_memory).ok_or_else(|| "No memory export".to_string())
}
fn read_i32(caller: &mut Caller<'_, Host>, m: &wasmi::Memory, ptr: i32) -> R<i32> {
    let mut b = [0u8; 4];
    m.read(&*caller, ptr as usize, &mut b).map_err(|e| e.to_string())?;
    Ok(i32::from_le_bytes(b))
}
fn write_i32(caller: &mut Caller<'_, Host>, m: &wasmi::Memory, ptr: i32, v: i32) -> R<()> {
    m.write(&mut *caller, ptr as usize, &v.to_le_bytes()).map_err(|e| e.to_string())
}

// The host functions follow charms-app-runner's behaviour: errors become -1 results (the
// reference's `unwrap()`s on iovec reads in fd_read would panic; here they give -1 as well).
fn fd_read(mut caller: Caller<'_, Host>, fd: i32, iovs: i32, iovs_len: i32, nread: i32) -> i32 {
    let r = (|| -> R<i32> {
        if fd != 0 {
            return Ok(-1);
        }
        let m = memory(&mut caller)?;
        let mut iov = Vec::new();
        for i in 0..iovs_len {
            let a = iovs + i * 8;
            iov.push((read_i32(&mut caller, &m, a)? as usize, read_i32(&mut caller, &m, a + 4)? as usize));
        }
        let mut ops = Vec::new();
        let mut total = 0usize;
        {
            let st = caller.data_mut();
            for (ptr, len) in iov {
                let n = len.min(st.stdin.len());
                if n == 0 {
                    break;
                }
                ops.push((ptr, st.stdin.drain(..n).collect::<Vec<_>>()));
                total += n;
            }
        }
        for (ptr, data) in ops {
            m.write(&mut caller, ptr, &data).map_err(|e| e.to_string())?;
        }
        write_i32(&mut caller, &m, nread, total as i32)?;
        Ok(0)
    })();
    r.unwrap_or(-1)
}

fn fd_write(mut caller: Caller<'_, Host>, fd: i32, iovs: i32, iovs_len: i32, nwritten: i32) -> i32 {
    let r = (|| -> R<i32> {
        if fd != 2 {
            return Err("can only write to stderr".into());
        }
        let m = memory(&mut caller)?;
        let mut total = 0usize;
        let mut all = Vec::new();
        for i in 0..iovs_len {
            let a = iovs + i * 8;
            let ptr = read_i32(&mut caller, &m, a)? as usize;
            let len = read_i32(&mut caller, &m, a + 4)? as usize;
            let mut b = vec![0u8; len];
            m.read(&caller, ptr, &mut b).map_err(|e| e.to_string())?;
            all.extend_from_slice(&b);
            total += len;
        }
        caller.data_mut().stderr.extend_from_slice(&all);
        write_i32(&mut caller, &m, nwritten, total as i32)?;
        Ok(0)
    })();
    r.unwrap_or(-1)
}

fn environ_sizes_get(mut caller: Caller<'_, Host>, c: i32, s: i32) -> i32 {
    let r = (|| -> R<i32> {
        let m = memory(&mut caller)?;
        write_i32(&mut caller, &m, c, 0)?;
        write_i32(&mut caller, &m, s, 0)?;
        Ok(0)
    })();
    r.unwrap_or(-1)
}

fn random_get(mut caller: Caller<'_, Host>, buf: i32, len: i32) -> i32 {
    // The reference panics (expect) on a missing memory or a write out of bounds.
    let m = memory(&mut caller).expect("No memory export");
    let mut bytes = vec![0u8; len as usize];
    caller.data_mut().rng.fill(&mut bytes);
    m.write(&mut caller, buf as usize, &bytes).expect("failed to write random bytes");
    0
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn run(engine: &Engine, wasm: &[u8], stdin: Vec<u8>, seed: [u8; 32], budget: u64) -> String {
    let host = Host { stdin, stderr: Vec::new(), rng: ChaCha12::new(seed) };
    let mut store = Store::new(engine, host);
    store.set_fuel(budget).expect("fuel metering is on");
    let mut linker = Linker::<Host>::new(engine);
    let w = "wasi_snapshot_preview1";
    linker.func_wrap(w, "fd_write", fd_write).unwrap();
    linker.func_wrap(w, "fd_read", fd_read).unwrap();
    linker.func_wrap(w, "environ_get", |_: Caller<'_, Host>, _: i32, _: i32| -> i32 { 0 }).unwrap();
    linker.func_wrap(w, "environ_sizes_get", environ_sizes_get).unwrap();
    linker.func_wrap(w, "proc_exit", |_: Caller<'_, Host>, _: i32| {}).unwrap();
    linker.func_wrap(w, "random_get", random_get).unwrap();
    let verdict = (|| -> Result<(), (String, wasmi::Error)> {
        let module = Module::new(engine, wasm).map_err(|e| ("invalid".to_string(), e))?;
        let instance = linker.instantiate_and_start(&mut store, &module).map_err(|e| ("trap".to_string(), e))?;
        let Some(main) = instance.get_func(&store, "_start") else {
            return Err(("invalid".into(), wasmi::Error::new("we should have a main function")));
        };
        let typed = main.typed::<(), ()>(&store).map_err(|e| ("invalid".to_string(), e))?;
        typed.call(&mut store, ()).map_err(|e| ("trap".to_string(), e))
    })();
    let fuel = budget - store.get_fuel().unwrap_or(0);
    match verdict {
        Ok(()) => format!("{{\"fuel\":{fuel},\"verdict\":\"ok\"}}"),
        Err((kind, e)) => {
            let dbg = format!("{e:?}");
            let kind = if e.as_trap_code() == Some(TrapCode::OutOfFuel) || dbg.contains("OutOfFuel") { "out_of_fuel".to_string() } else { kind };
            format!("{{\"fuel\":{fuel},\"verdict\":\"{kind}\",\"error\":{}}}", json_str(&dbg))
        }
    }
}

fn parse_seed(h: &str) -> [u8; 32] {
    let mut s = [0u8; 32];
    if h.len() == 64 {
        for i in 0..32 {
            s[i] = u8::from_str_radix(&h[i * 2..i * 2 + 2], 16).expect("seed must be hex");
        }
    }
    s
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut budget: u64 = 1_000_000_000;
    let mut seed = [0u8; 32];
    let mut batch = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--fuel" => {
                budget = args[i + 1].parse().expect("--fuel N");
                args.drain(i..i + 2);
            }
            "--seed" => {
                seed = parse_seed(&args[i + 1]);
                args.drain(i..i + 2);
            }
            "--batch" => {
                batch = true;
                args.remove(i);
            }
            _ => i += 1,
        }
    }
    let mut config = Config::default();
    config.consume_fuel(true);
    config.compilation_mode(CompilationMode::Lazy);
    let engine = Engine::new(&config);
    let out = std::io::stdout();
    let mut out = out.lock();
    if batch {
        for line in std::io::stdin().lock().lines() {
            let line = line.expect("stdin");
            if line.is_empty() {
                continue;
            }
            let parts: Vec<&str> = line.split('\t').collect();
            let wasm = std::fs::read(parts[0]).expect("module file");
            let stdin = match parts.get(1) {
                Some(p) if !p.is_empty() => std::fs::read(p).expect("stdin file"),
                _ => Vec::new(),
            };
            let sd = parts.get(2).map(|h| parse_seed(h)).unwrap_or([0u8; 32]);
            let fuel = match parts.get(3) {
                Some(f) if !f.is_empty() => f.parse().expect("fuel budget"),
                _ => budget,
            };
            // A fresh engine per module, as the reference's run sees a module for the first time.
            let engine = Engine::new(&config);
            writeln!(out, "{}", run(&engine, &wasm, stdin, sd, fuel)).unwrap();
            out.flush().unwrap();
        }
        return;
    }
    if args.is_empty() {
        eprintln!("usage: wasmi-oracle [--fuel N] [--seed HEX64] MODULE.wasm [STDIN-FILE] | --batch");
        std::process::exit(2);
    }
    let wasm = std::fs::read(&args[0]).expect("module file");
    let stdin = args.get(1).map(|p| std::fs::read(p).expect("stdin file")).unwrap_or_default();
    writeln!(out, "{}", run(&engine, &wasm, stdin, seed, budget)).unwrap();
}
