#!/usr/bin/env bash
# Install what bridge needs from the system, only when it is missing:
#   - Erlang/OTP with the crypto application (erlang-base erlang-crypto),
#     EUnit for the Erlang-side tests (erlang-dev has eunit.hrl, erlang-eunit
#     the modules), dialyzer for make lint (erlang-dialyzer), and public_key
#     for the opt-in public_key:sign/verify calls (erlang-public-key), and ssl
#     for the tls-handshake scenarios' Erlang rows (erlang-ssl);
#   - the openssl CLI;
#   - Elixir, for bridge time's ex: expressions (tests/cli/test_time.py runs one
#     and, under CI=true, fails without it): Debian's elixir package, a few MB
#     on top of the Erlang already installed;
#   - a C compiler and perl (with its core modules: OpenSSL's Configure uses
#     IPC::Cmd), for scripts/build-noasm-openssl, which builds OpenSSL without
#     assembler for the tests of why a path does not use the hardware.
# Idempotent: a machine that has everything is left alone. Installing needs
# root (apt-get); without it, say what to install and fail.
set -euo pipefail

missing=()

erl_ok() {
  command -v erl >/dev/null 2>&1 || return 1
  erl -noshell -noinput -eval '
    Ok = fun(M) -> case code:ensure_loaded(M) of {module, M} -> true; _ -> false end end,
    case Ok(crypto) andalso Ok(eunit) andalso Ok(dialyzer) andalso Ok(public_key) andalso Ok(ssl) of true -> halt(0); false -> halt(1) end.' >/dev/null 2>&1
}

erl_ok || missing+=(erlang-base erlang-crypto erlang-dev erlang-eunit erlang-dialyzer erlang-public-key erlang-ssl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v elixir >/dev/null 2>&1 || missing+=(elixir)
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
perl -MIPC::Cmd -e1 >/dev/null 2>&1 || missing+=(perl)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "bridge setup: missing system packages: ${missing[*]}" >&2
  echo "install them (Debian/Ubuntu: sudo apt-get install ${missing[*]}) and run make setup again" >&2
  exit 1
fi

echo "bridge setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
erl_ok || { echo "bridge setup: Erlang installed but crypto/eunit/dialyzer/public_key/ssl still unusable" >&2; exit 1; }
