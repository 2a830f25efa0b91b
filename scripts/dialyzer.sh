#!/usr/bin/env bash
# Dialyzer on the Erlang worker (erl/*.erl), for make lint.
#
# The PLT (erts kernel stdlib crypto) takes a few minutes to build, so it is
# built on first use and kept in bridge's cache directory, found the way
# bridge/system/otp.py cache_root() finds it: $BRIDGE_CACHE_DIR/bridge, else
# $XDG_CACHE_HOME/bridge, else ~/.cache/bridge. It is named by the full OTP
# version (dialyzer-otp25.2.3.plt): dialyzer refuses a PLT written by another
# dialyzer release, and after an upgrade the old file is simply not used.
#
# Warnings, on top of dialyzer's defaults:
#   -Wunmatched_returns  a call whose {ok, _} | {error, _} result is dropped
#                        would hide a failure; `_ =` says it is on purpose;
#   -Werror_handling     a function that can only raise is a bug here: every
#                        refusal is an {error, {Class, Message}} reply;
#   -Wunderspecs         a -spec wider than what the function returns would
#                        document replies the worker never sends;
#   -Wunknown            a call to a module or function missing from the PLT
#                        (a typo in a module name) fails lint.
# Not -Woverspecs/-Wspecdiffs (dialyzer's manual advises against them), nor
# -Wextra_return/-Wmissing_return (OTP 25+ only; lint runs on older OTPs too).
set -euo pipefail
cd "$(dirname "$0")/.."

# As bridge does for every erl it starts: a user's flags must not change
# what lint sees.
unset ERL_FLAGS ERL_AFLAGS ERL_ZFLAGS

if ! command -v dialyzer >/dev/null 2>&1; then
  echo "dialyzer is missing: run make setup (Debian/Ubuntu: apt-get install erlang-dialyzer)" >&2
  exit 1
fi

otp=$(erl -noshell -noinput -eval '
  R = erlang:system_info(otp_release),
  F = filename:join([code:root_dir(), "releases", R, "OTP_VERSION"]),
  V = case file:read_file(F) of {ok, T} -> string:trim(binary_to_list(T)); _ -> R end,
  io:put_chars(V), halt(0).')
otp=${otp//[^A-Za-z0-9._-]/_}  # the version names a file

base=${BRIDGE_CACHE_DIR:-${XDG_CACHE_HOME:-}}
cache=${base:+$base/bridge}
cache=${cache:-$HOME/.cache/bridge}
plt=$cache/dialyzer-otp$otp.plt

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -f "$plt" ]; then
  echo "dialyzer: building $plt (once per OTP version; a few minutes)" >&2
  mkdir -p -m 700 "$cache"
  start=$SECONDS
  # Built beside the cache, then renamed: an interrupted build leaves no
  # half-written PLT for the next run to trust. Exit status 2 only means
  # dialyzer printed warnings about OTP's own code.
  tmp=$(mktemp "$cache/.dialyzer-otp$otp.XXXXXX")
  trap 'rm -rf "$work" "$tmp"' EXIT
  rc=0
  dialyzer --build_plt --apps erts kernel stdlib crypto --output_plt "$tmp" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
    echo "dialyzer: building the PLT failed (exit $rc)" >&2
    exit 1
  fi
  mv -f "$tmp" "$plt"
  echo "dialyzer: PLT built in $((SECONDS - start)) s" >&2
fi

erlc +debug_info -o "$work" erl/*.erl
dialyzer --plt "$plt" -Wunmatched_returns -Werror_handling -Wunderspecs -Wunknown "$work"/*.beam
