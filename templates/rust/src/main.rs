#![no_main]
charms_sdk::main!({{crate}}::app_contract);
