#!/bin/sh
# The official Redis image is built with protected mode off by default (it serves a container
# network, not loopback): Debian's redis-server has it on, which refuses every other container
# whatever the command line. This wrapper, first on PATH, gives Debian's server the official
# default, unless the command line sets protected-mode itself.
case " $* " in
  *protected-mode*) exec /usr/bin/redis-server "$@" ;;
  *) exec /usr/bin/redis-server "$@" --protected-mode no ;;
esac
