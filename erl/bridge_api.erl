%% bridge_api: which crypto API the running OTP release offers for each call,
%% the label the driver shows for it, and the tables that turn the names in a
%% request into crypto's atoms.
%%
%% Chosen at run time because one compiled worker serves OTP 21 to current
%% releases and crypto's API moved between them: crypto:hmac/3,4 until OTP 23,
%% crypto:mac/4 and macN/5 from 22.1; crypto_one_time from 22, block_encrypt
%% until 23. Each choice takes Exported(M, F, A), which is
%% erlang:function_exported/3 in real use; the EUnit tests pass a fake to
%% force every branch.
%%
%% The tables are closed: a name they do not list is refused with
%% bad_request, so a request can never create an atom.
-module(bridge_api).

-export([mac_api/2, stream_api/1, cipher_api/2, hash_api/1, api_name/1]).
-export([pbkdf2_api/1, aead_reuse_api/1, import_api/1]).
-export([digest/1, cipher/1, curve/1, ed_curve/1, agreement_curve/1]).
-export_type([exported/0, api/0, mac_api/0, stream_api/0, cipher_api/0, hash_api/0,
              digest/0, cipher/0, aead_cipher/0, mode/0, curve/0, ed_curve/0,
              agreement_curve/0, refused/0]).

-type exported() :: fun((module(), atom(), arity()) -> boolean()).
-type mac_api() :: macN | mac | hmac4 | hmac3.
-type stream_api() :: mac_init | hmac_init.
-type cipher_api() :: one_time | one_time_aead | block.
-type hash_api() :: hash.
%% Every label a reply can carry; none when the release lacks the call.
-type api() :: mac_api() | stream_api() | cipher_api() | hash_api()
             | sign | verify | hash_file | mac_key | hmac_key | exor | none
             | strong_rand_bytes | pbkdf2_hmac | aead_init | aead_init_only
             | sign_opts | verify_opts | privkey_to_pubkey | compute_key | generate_compute
             | rand_bytes | pbkdf2_mac | pbkdf2_mac_stream | hash_stream | pk_sign | pk_verify
             | user_erlang | user_elixir | tls_connect | tls_resume.
-type digest() :: sha | sha224 | sha256 | sha384 | sha512 | md5 | sha3_256 | sha3_512
                | blake2b.
-type cbc_cipher() :: aes_128_cbc | aes_256_cbc.
-type aead_cipher() :: aes_128_gcm | aes_256_gcm | chacha20_poly1305.
-type cipher() :: cbc_cipher() | aead_cipher().
-type mode() :: cbc | aead.
-type curve() :: secp256r1 | secp384r1 | secp521r1.
-type ed_curve() :: ed25519.
-type agreement_curve() :: x25519 | secp256r1.
-type refused() :: {error, {bad_request, binary()}}.

%% MacBytes > 0 truncates the MAC (crypto:macN/5, crypto:hmac/4);
%% 0 means the full MAC (crypto:mac/4, crypto:hmac/3).
-spec mac_api(exported(), non_neg_integer()) -> mac_api() | none.
mac_api(Exported, MacBytes) ->
    _ = code:ensure_loaded(crypto),
    case {Exported(crypto, macN, 5), Exported(crypto, hmac, 4), MacBytes > 0} of
        {true, _, true} -> macN;
        {true, _, false} -> mac;
        {false, true, true} -> hmac4;
        {false, true, false} -> hmac3;
        {false, false, _} -> none
    end.

%% The streaming MAC API, per message: mac_init/3 from OTP 22.1, hmac_init/2
%% before.
-spec stream_api(exported()) -> stream_api() | none.
stream_api(Exported) ->
    _ = code:ensure_loaded(crypto),
    case {Exported(crypto, mac_init, 3), Exported(crypto, hmac_init, 2)} of
        {true, _} -> mac_init;
        {false, true} -> hmac_init;
        _ -> none
    end.

%% crypto_one_time/5 and crypto_one_time_aead/7 from OTP 22.0; before that
%% (OTP 21) only block_encrypt/4, which OTP 24 removed.
-spec cipher_api(exported(), mode()) -> cipher_api() | none.
cipher_api(Exported, Mode) ->
    _ = code:ensure_loaded(crypto),
    case {Mode, Exported(crypto, crypto_one_time, 5), Exported(crypto, crypto_one_time_aead, 7),
          Exported(crypto, block_encrypt, 4)} of
        {cbc, true, _, _} -> one_time;
        {aead, _, true, _} -> one_time_aead;
        {_, _, _, true} -> block;
        _ -> none
    end.

%% crypto:hash/2 (and hash_init/1 for files) exist on every release bridge
%% supports; the check turns a broken crypto into an unsupported result.
-spec hash_api(exported()) -> hash_api() | none.
hash_api(Exported) ->
    _ = code:ensure_loaded(crypto),
    case Exported(crypto, hash, 2) of
        true -> hash;
        false -> none
    end.

%% crypto:pbkdf2_hmac/5 came in OTP 24.2 (crypto 5.0.5).
-spec pbkdf2_api(exported()) -> pbkdf2_hmac | none.
pbkdf2_api(Exported) ->
    _ = code:ensure_loaded(crypto),
    case Exported(crypto, pbkdf2_hmac, 5) of
        true -> pbkdf2_hmac;
        false -> none
    end.

%% A keyed AEAD state that seals many packets: crypto_one_time_aead_init/4
%% with crypto_one_time_aead/4, OTP 28.0. Before it there is none:
%% crypto_init/4 refuses AEAD ciphers ("Missing arguments for this cipher",
%% checked on OTP 23 and 25), and each crypto_one_time_aead call sets the key
%% up again.
-spec aead_reuse_api(exported()) -> aead_init | none.
aead_reuse_api(Exported) ->
    _ = code:ensure_loaded(crypto),
    case {Exported(crypto, crypto_one_time_aead_init, 4),
          Exported(crypto, crypto_one_time_aead, 4)} of
        {true, true} -> aead_init;
        _ -> none
    end.

%% A raw RSA private key imported alone, its public part read back:
%% crypto:privkey_to_pubkey/2 (OTP 20.2). For EC keys crypto has no such
%% call (privkey_to_pubkey(ecdsa, ...) is notsup).
-spec import_api(exported()) -> privkey_to_pubkey | none.
import_api(Exported) ->
    _ = code:ensure_loaded(crypto),
    case Exported(crypto, privkey_to_pubkey, 2) of
        true -> privkey_to_pubkey;
        false -> none
    end.

%% The label in each reply: how a user writes the call on this release.
%% -Wunderspecs would have the spec say "a binary of at least 4 bytes", as
%% dialyzer infers from the literals; binary() is what matters. The attribute
%% is nowarn_function, not no_underspecs: OTP 21-23's compiler rejects
%% no_underspecs (added in OTP 24), and this module must compile there. The
%% function is a table of literals, so nothing else can hide here.
-dialyzer({nowarn_function, api_name/1}).
-spec api_name(api()) -> binary().
api_name(macN) -> <<"crypto:macN/5">>;
api_name(mac) -> <<"crypto:mac/4">>;
api_name(hmac4) -> <<"crypto:hmac/4">>;
api_name(hmac3) -> <<"crypto:hmac/3">>;
api_name(hash) -> <<"crypto:hash/2">>;
api_name(sign) -> <<"crypto:sign/4">>;
api_name(verify) -> <<"crypto:verify/5">>;
api_name(hash_file) -> <<"crypto:hash_init/1 + hash_update/2 per file:read/2 chunk + hash_final/1">>;
api_name(one_time) -> <<"crypto:crypto_one_time/5">>;
api_name(one_time_aead) -> <<"crypto:crypto_one_time_aead/7">>;
api_name(block) -> <<"crypto:block_encrypt/4">>;
api_name(mac_init) -> <<"crypto:mac_init/3 + mac_update/2 + mac_finalN/2">>;
api_name(hmac_init) -> <<"crypto:hmac_init/2 + hmac_update/2 + hmac_final_n/2">>;
api_name(mac_key) -> <<"crypto:mac_init/3">>;
api_name(hmac_key) -> <<"crypto:hmac_init/2">>;
api_name(exor) -> <<"crypto:exor/2">>;
api_name(strong_rand_bytes) -> <<"crypto:strong_rand_bytes/1">>;
api_name(pbkdf2_hmac) -> <<"crypto:pbkdf2_hmac/5">>;
api_name(aead_init) -> <<"crypto:crypto_one_time_aead_init/4 + crypto_one_time_aead/4">>;
api_name(aead_init_only) -> <<"crypto:crypto_one_time_aead_init/4">>;
api_name(sign_opts) -> <<"crypto:sign/5">>;
api_name(verify_opts) -> <<"crypto:verify/6">>;
api_name(privkey_to_pubkey) -> <<"crypto:privkey_to_pubkey/2">>;
api_name(compute_key) -> <<"crypto:compute_key/4">>;
api_name(generate_compute) -> <<"crypto:generate_key/2 + compute_key/4">>;
api_name(rand_bytes) -> <<"rand:bytes/1">>;
api_name(pbkdf2_mac) -> <<"PBKDF2 in Erlang: crypto:mac/4 and crypto:exor/2 per iteration">>;
api_name(pbkdf2_mac_stream) ->
    <<"PBKDF2 in Erlang: crypto:mac_init/3 + mac_update/2 + mac_final/1 and crypto:exor/2 per"
      " iteration">>;
api_name(hash_stream) -> <<"crypto:hash_init/1 + hash_update/2 + hash_final/1">>;
api_name(pk_sign) -> <<"public_key:sign/3">>;
api_name(pk_verify) -> <<"public_key:verify/4">>;
api_name(tls_connect) -> <<"ssl:connect/4 + ssl:close/1 (a server node on 127.0.0.1)">>;
api_name(tls_resume) ->
    <<"ssl:connect/4 + ssl:close/1, resuming a session (a server node on 127.0.0.1)">>;
api_name(user_erlang) -> <<"user code: a module compiled by compile:file/2">>;
api_name(user_elixir) -> <<"user code: a module compiled by Elixir's Code.compile_string/2">>;
api_name(none) -> <<"none">>.

%% User-facing digest names (as in Python and OpenSSL) to crypto's atoms.
-spec digest(binary()) -> {ok, digest()} | refused().
digest(<<"sha1">>) -> {ok, sha};
digest(<<"sha224">>) -> {ok, sha224};
digest(<<"sha256">>) -> {ok, sha256};
digest(<<"sha384">>) -> {ok, sha384};
digest(<<"sha512">>) -> {ok, sha512};
digest(<<"md5">>) -> {ok, md5};
digest(<<"sha3-256">>) -> {ok, sha3_256};
digest(<<"sha3-512">>) -> {ok, sha3_512};
digest(<<"blake2b512">>) -> {ok, blake2b};
digest(Other) -> refuse(<<"unknown digest: ">>, Other).

%% Ciphers by their OpenSSL names: {crypto's atom (OTP 22+), mode}.
-spec cipher(binary()) -> {ok, {cbc_cipher(), cbc} | {aead_cipher(), aead}} | refused().
cipher(<<"aes-128-cbc">>) -> {ok, {aes_128_cbc, cbc}};
cipher(<<"aes-256-cbc">>) -> {ok, {aes_256_cbc, cbc}};
cipher(<<"aes-128-gcm">>) -> {ok, {aes_128_gcm, aead}};
cipher(<<"aes-256-gcm">>) -> {ok, {aes_256_gcm, aead}};
cipher(<<"chacha20-poly1305">>) -> {ok, {chacha20_poly1305, aead}};
cipher(Other) -> refuse(<<"unknown cipher: ">>, Other).

%% ECDSA curves by the short names the scenarios use.
-spec curve(binary()) -> {ok, curve()} | refused().
curve(<<"p256">>) -> {ok, secp256r1};
curve(<<"p384">>) -> {ok, secp384r1};
curve(<<"p521">>) -> {ok, secp521r1};
curve(Other) -> refuse(<<"unknown curve: ">>, Other).

%% EdDSA curves.
-spec ed_curve(binary()) -> {ok, ed_curve()} | refused().
ed_curve(<<"ed25519">>) -> {ok, ed25519};
ed_curve(Other) -> refuse(<<"unknown EdDSA curve: ">>, Other).

%% Key-agreement curves: crypto:compute_key(ecdh, ...) takes both.
-spec agreement_curve(binary()) -> {ok, agreement_curve()} | refused().
agreement_curve(<<"x25519">>) -> {ok, x25519};
agreement_curve(<<"p256">>) -> {ok, secp256r1};
agreement_curve(Other) -> refuse(<<"unknown agreement curve: ">>, Other).

-spec refuse(binary(), binary()) -> refused().
refuse(What, Name) ->
    {error, {bad_request, <<What/binary, (bridge_args:printable(Name))/binary>>}}.
