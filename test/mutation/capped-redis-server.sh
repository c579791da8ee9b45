#!/bin/sh
# redis-server for mutation runs (REDIS_SERVER points here): a mutant that
# loops writing inside a script (a dropped LPOP in a `while true`) grows
# Redis without bound, and maxmemory cannot stop a script that has already
# written. Capping the address space makes such a server abort within
# seconds (the test fails: the mutant is killed) instead of eating the
# shared machine's memory until the test times out.
ulimit -v "${WURK_MUTATION_REDIS_KB:-524288}"
exec "${WURK_MUTATION_REDIS_BINARY:-redis-server}" "$@"
