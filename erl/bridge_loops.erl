%% bridge_loops: what one call computes, and the loop that repeats it.
%%
%% For each call the worker serves, a constructor returns {Once, Loop}.
%% Once() makes the call once and returns its output, which the driver checks
%% against its own reference. Loop(N) makes the call N times; bridge_measure
%% times it.
%%
%% One loop per API, written out, so that the timed loop makes the same call
%% a user would write, with no fun call per iteration: the only fun call is
%% Loop(N) itself, once per sample. (erlperf generates its loop as code for
%% the same reason.)
%%
%% crypto:hmac/3,4, hmac_init/2 and block_encrypt/4 were removed in OTP 24.
%% They are called through a module held in a variable (old_crypto/0) so
%% that newer compilers do not warn about the removed functions; only
%% OTP 21 - 23 ever take those branches, as bridge_api chooses. The same way,
%% functions newer than some supported release (crypto_one_time_aead_init/4,
%% OTP 28) go through new_crypto/0, so that dialyzer on an older OTP does not
%% flag them as unknown; only a release that has them takes those branches.
-module(bridge_loops).

-export([mac/5, mac_stream/5, cipher/5, sign/4, verify/5, hash/2, hash_file/3]).
-export([mac_key/3, nif_floor/1]).
-export([mac_mfa/5]).
-export([rand_bytes/1, pbkdf2/5, aead_reuse/4, aead_setup/2]).
-export([eddsa_sign/3, eddsa_verify/4, rsa_sign/4, rsa_verify/5, rsa_import/1]).
-export([agree/3, agree_fresh/2]).
-export_type([timed_call/0, rsa_opts/0]).

-type timed_call() :: {Once :: fun(() -> binary()), Loop :: bridge_measure:loop()}.
%% MAC length in bytes; 0 means the full MAC.
-type mac_bytes() :: 0..64.
%% RSA padding options: [] is PKCS#1 v1.5 (sign/4, verify/5); PSS passes
%% its options (sign/5, verify/6).
-type rsa_opts() :: [{rsa_padding, rsa_pkcs1_pss_padding} | {rsa_pss_saltlen, integer()}
                     | {rsa_mgf1_md, bridge_api:digest()}].

%% ---------------------------------------------------------------------------
%% HMAC, one-shot. MacBytes > 0 truncates (macN/5, hmac/4).

-spec mac(bridge_api:mac_api(), bridge_api:digest(), binary(), binary(), mac_bytes()) ->
          timed_call().
mac(Api, Dg, K, D, L) ->
    {fun() -> mac_once(Api, Dg, K, D, L) end, fun(N) -> mac_loop(Api, N, Dg, K, D, L) end}.

mac_once(macN, Dg, K, D, L) -> crypto:macN(hmac, Dg, K, D, L);
mac_once(mac, Dg, K, D, _) -> crypto:mac(hmac, Dg, K, D);
mac_once(hmac4, Dg, K, D, L) -> M = old_crypto(), M:hmac(Dg, K, D, L);
mac_once(hmac3, Dg, K, D, _) -> M = old_crypto(), M:hmac(Dg, K, D).

mac_loop(macN, N, Dg, K, D, L) -> loop_macN(N, Dg, K, D, L);
mac_loop(mac, N, Dg, K, D, _) -> loop_mac(N, Dg, K, D);
mac_loop(hmac4, N, Dg, K, D, L) -> loop_hmac4(N, old_crypto(), Dg, K, D, L);
mac_loop(hmac3, N, Dg, K, D, _) -> loop_hmac3(N, old_crypto(), Dg, K, D).

loop_macN(0, _, _, _, _) -> ok;
loop_macN(N, Dg, K, D, L) -> _ = crypto:macN(hmac, Dg, K, D, L), loop_macN(N - 1, Dg, K, D, L).

loop_mac(0, _, _, _) -> ok;
loop_mac(N, Dg, K, D) -> _ = crypto:mac(hmac, Dg, K, D), loop_mac(N - 1, Dg, K, D).

loop_hmac4(0, _, _, _, _, _) -> ok;
loop_hmac4(N, M, Dg, K, D, L) -> _ = M:hmac(Dg, K, D, L), loop_hmac4(N - 1, M, Dg, K, D, L).

loop_hmac3(0, _, _, _, _) -> ok;
loop_hmac3(N, M, Dg, K, D) -> _ = M:hmac(Dg, K, D), loop_hmac3(N - 1, M, Dg, K, D).

%% The same one-shot call as {M, F, A}, for the thread's timer:tc harness.
-spec mac_mfa(bridge_api:mac_api(), bridge_api:digest(), binary(), binary(), mac_bytes()) ->
          {module(), atom(), [term()]}.
mac_mfa(macN, Dg, K, D, L) -> {crypto, macN, [hmac, Dg, K, D, L]};
mac_mfa(mac, Dg, K, D, _) -> {crypto, mac, [hmac, Dg, K, D]};
mac_mfa(hmac4, Dg, K, D, L) -> {old_crypto(), hmac, [Dg, K, D, L]};
mac_mfa(hmac3, Dg, K, D, _) -> {old_crypto(), hmac, [Dg, K, D]}.

old_crypto() -> crypto.

%% ---------------------------------------------------------------------------
%% HMAC, streaming, per message: a keyed state cannot be reused after
%% mac_finalN (a second final gives wrong bytes), and crypto has no way to
%% copy one, so the key is set up for every message here too.

-spec mac_stream(bridge_api:stream_api(), bridge_api:digest(), binary(), binary(),
                 mac_bytes()) -> timed_call().
mac_stream(Api, Dg, K, D, L) ->
    {fun() -> stream_once(Api, Dg, K, D, L) end, fun(N) -> stream_loop(N, Api, Dg, K, D, L) end}.

stream_once(mac_init, Dg, K, D, L) ->
    S = crypto:mac_init(hmac, Dg, K),
    _ = crypto:mac_update(S, D),
    case L of
        0 -> crypto:mac_final(S);
        _ -> crypto:mac_finalN(S, L)
    end;
stream_once(hmac_init, Dg, K, D, L) ->
    M = old_crypto(),
    S = M:hmac_update(M:hmac_init(Dg, K), D),
    case L of
        0 -> M:hmac_final(S);
        _ -> M:hmac_final_n(S, L)
    end.

stream_loop(0, _, _, _, _, _) -> ok;
stream_loop(N, Api, Dg, K, D, L) ->
    _ = stream_once(Api, Dg, K, D, L),
    stream_loop(N - 1, Api, Dg, K, D, L).

%% ---------------------------------------------------------------------------
%% Parts of an HMAC call, timed beside it to take its fixed cost apart (the
%% hmac-parts scenario). Their outputs are not a MAC: the driver does not
%% check them (calls.Check.PART).

%% The key set-up alone: a MAC context keyed for the digest (on OpenSSL 3 an
%% EVP_MAC_CTX with its fetches; on 1.1.1 an EVP_PKEY and EVP_DigestSignInit,
%% which runs the HMAC key schedule), no message, no final.
-spec mac_key(bridge_api:stream_api(), bridge_api:digest(), binary()) -> timed_call().
mac_key(mac_init, Dg, K) ->
    {fun() -> _ = crypto:mac_init(hmac, Dg, K), <<>> end, fun(N) -> key_loop(N, Dg, K) end};
mac_key(hmac_init, Dg, K) ->
    M = old_crypto(),
    {fun() -> _ = M:hmac_init(Dg, K), <<>> end, fun(N) -> old_key_loop(N, M, Dg, K) end}.

key_loop(0, _, _) -> ok;
key_loop(N, Dg, K) -> _ = crypto:mac_init(hmac, Dg, K), key_loop(N - 1, Dg, K).

old_key_loop(0, _, _, _) -> ok;
old_key_loop(N, M, Dg, K) -> _ = M:hmac_init(Dg, K), old_key_loop(N - 1, M, Dg, K).

%% The floor under every crypto call: crypto:exor/2 is a NIF of crypto
%% (do_exor, behind the same kind of thin Erlang wrapper as mac/4) that
%% touches no OpenSSL state. It checks two binaries and makes a result binary
%% of their size, as a MAC call makes its MAC, then XORs that many bytes. So
%% it times the Erlang-to-NIF call and the result binary, and almost nothing
%% else. B is MAC-sized.
-spec nif_floor(binary()) -> timed_call().
nif_floor(B) ->
    {fun() -> crypto:exor(B, B) end, fun(N) -> floor_loop(N, B) end}.

floor_loop(0, _) -> ok;
floor_loop(N, B) -> _ = crypto:exor(B, B), floor_loop(N - 1, B).

%% ---------------------------------------------------------------------------
%% Ciphers, encrypting. The GCM tag is appended to the ciphertext, as
%% `openssl enc` would lay it out.

-spec cipher(bridge_api:cipher_api(), bridge_api:cipher(), binary(), binary(), binary()) ->
          timed_call().
cipher(Api, C, K, IV, D) ->
    {fun() -> cipher_once(Api, C, K, IV, D) end, fun(N) -> cipher_loop(N, Api, C, K, IV, D) end}.

cipher_once(one_time, C, K, IV, D) ->
    crypto:crypto_one_time(C, K, IV, D, true);
cipher_once(one_time_aead, C, K, IV, D) ->
    {CT, Tag} = crypto:crypto_one_time_aead(C, K, IV, D, <<>>, 16, true),
    <<CT/binary, Tag/binary>>;
cipher_once(block, C, K, IV, D) ->
    M = old_crypto(),
    case old_cipher(C) of
        {aead, chacha20_poly1305} ->
            %% OTP 21 takes {AAD, PlainText} for it: the tag is always 16 bytes.
            {CT, Tag} = M:block_encrypt(chacha20_poly1305, K, IV, {<<>>, D}),
            <<CT/binary, Tag/binary>>;
        {aead, Old} ->
            {CT, Tag} = M:block_encrypt(Old, K, IV, {<<>>, D, 16}),
            <<CT/binary, Tag/binary>>;
        Old ->
            M:block_encrypt(Old, K, IV, D)
    end.

%% OTP 21's block_encrypt/4 names for the OTP 22+ cipher atoms.
old_cipher(aes_128_cbc) -> aes_cbc128;
old_cipher(aes_256_cbc) -> aes_cbc256;
old_cipher(aes_128_gcm) -> {aead, aes_gcm};
old_cipher(aes_256_gcm) -> {aead, aes_gcm};
old_cipher(chacha20_poly1305) -> {aead, chacha20_poly1305}.

cipher_loop(0, _, _, _, _, _) -> ok;
cipher_loop(N, Api, C, K, IV, D) ->
    _ = cipher_once(Api, C, K, IV, D),
    cipher_loop(N - 1, Api, C, K, IV, D).

%% ---------------------------------------------------------------------------
%% ECDSA: keys as [PrivOrPub, Curve]; crypto:sign/4 and verify/5 exist on
%% every OTP bridge supports (R16B01+).

-spec sign(bridge_api:digest(), bridge_api:curve(), binary(), binary()) -> timed_call().
sign(Dg, Curve, Msg, Priv) ->
    Key = [Priv, Curve],
    {fun() -> crypto:sign(ecdsa, Dg, Msg, Key) end, fun(N) -> sign_loop(N, Dg, Msg, Key) end}.

sign_loop(0, _, _, _) -> ok;
sign_loop(N, Dg, Msg, Key) -> _ = crypto:sign(ecdsa, Dg, Msg, Key), sign_loop(N - 1, Dg, Msg, Key).

%% The output of a verify is one byte, <<1>> accepted or <<0>> refused, so it
%% travels and is checked like any other output.
-spec verify(bridge_api:digest(), bridge_api:curve(), binary(), binary(), binary()) ->
          timed_call().
verify(Dg, Curve, Msg, Sig, Pub) ->
    Key = [Pub, Curve],
    {fun() -> bool_bin(crypto:verify(ecdsa, Dg, Msg, Sig, Key)) end,
     fun(N) -> verify_loop(N, Dg, Msg, Sig, Key) end}.

bool_bin(true) -> <<1>>;
bool_bin(false) -> <<0>>.

verify_loop(0, _, _, _, _) -> ok;
verify_loop(N, Dg, Msg, Sig, Key) ->
    _ = crypto:verify(ecdsa, Dg, Msg, Sig, Key),
    verify_loop(N - 1, Dg, Msg, Sig, Key).

%% ---------------------------------------------------------------------------
%% Digests.

-spec hash(bridge_api:digest(), binary()) -> timed_call().
hash(Dg, D) ->
    {fun() -> crypto:hash(Dg, D) end, fun(N) -> hash_loop(N, Dg, D) end}.

hash_loop(0, _, _) -> ok;
hash_loop(N, Dg, D) -> _ = crypto:hash(Dg, D), hash_loop(N - 1, Dg, D).

%% A streaming digest of a file, as an application would write it: raw file
%% reads of Chunk bytes, each fed to hash_update. The path names a file the
%% driver generated in its private directory.
-spec hash_file(bridge_api:digest(), binary(), pos_integer()) -> timed_call().
hash_file(Dg, Path, Chunk) ->
    {fun() -> file_digest(Dg, Path, Chunk) end, fun(N) -> file_loop(N, Dg, Path, Chunk) end}.

file_digest(Dg, Path, Chunk) ->
    {ok, Fd} = file:open(Path, [read, raw, binary]),
    try
        hash_chunks(Fd, Chunk, crypto:hash_init(Dg))
    after
        ok = file:close(Fd)
    end.

hash_chunks(Fd, Chunk, State) ->
    case file:read(Fd, Chunk) of
        {ok, Bin} -> hash_chunks(Fd, Chunk, crypto:hash_update(State, Bin));
        eof -> crypto:hash_final(State)
    end.

file_loop(0, _, _, _) -> ok;
file_loop(N, Dg, Path, Chunk) ->
    _ = file_digest(Dg, Path, Chunk),
    file_loop(N - 1, Dg, Path, Chunk).

%% ---------------------------------------------------------------------------
%% Random bytes. Once() makes two calls, so that the driver can check that
%% they differ (random output has no reference); the loop makes one per
%% iteration.

-spec rand_bytes(pos_integer()) -> timed_call().
rand_bytes(N) ->
    {fun() -> <<(crypto:strong_rand_bytes(N))/binary, (crypto:strong_rand_bytes(N))/binary>> end,
     fun(K) -> rand_loop(K, N) end}.

rand_loop(0, _) -> ok;
rand_loop(K, N) -> _ = crypto:strong_rand_bytes(N), rand_loop(K - 1, N).

%% ---------------------------------------------------------------------------
%% PBKDF2-HMAC (OTP 24.2+, as bridge_api:pbkdf2_api/1 decides).

-spec pbkdf2(bridge_api:digest(), binary(), binary(), pos_integer(), pos_integer()) ->
          timed_call().
pbkdf2(Dg, Pass, Salt, Iter, Len) ->
    {fun() -> crypto:pbkdf2_hmac(Dg, Pass, Salt, Iter, Len) end,
     fun(N) -> pbkdf2_loop(N, Dg, Pass, Salt, Iter, Len) end}.

pbkdf2_loop(0, _, _, _, _, _) -> ok;
pbkdf2_loop(N, Dg, Pass, Salt, Iter, Len) ->
    _ = crypto:pbkdf2_hmac(Dg, Pass, Salt, Iter, Len),
    pbkdf2_loop(N - 1, Dg, Pass, Salt, Iter, Len).

%% ---------------------------------------------------------------------------
%% AEAD with a reused context (OTP 28+): the key is set up once by
%% crypto_one_time_aead_init/4; each crypto_one_time_aead/4 call takes a
%% nonce and seals one packet, the tag appended, as crypto_one_time_aead/7's
%% output is laid out here.

-spec aead_reuse(bridge_api:aead_cipher(), binary(), binary(), binary()) -> timed_call().
aead_reuse(C, K, IV, D) ->
    M = new_crypto(),
    %% The state is made here, once, outside any timed loop. A bad key fails
    %% here: Once() then makes the same call again, so that the error reaches
    %% bridge_ops's first run of Once(), as every other call's does.
    try M:crypto_one_time_aead_init(C, K, 16, true) of
        State ->
            {fun() -> M:crypto_one_time_aead(State, IV, D, <<>>) end,
             fun(N) -> aead_reuse_loop(N, M, State, IV, D) end}
    catch
        _:_ ->
            {fun() -> _ = M:crypto_one_time_aead_init(C, K, 16, true), <<>> end,
             fun(_) -> ok end}
    end.

aead_reuse_loop(0, _, _, _, _) -> ok;
aead_reuse_loop(N, M, State, IV, D) ->
    _ = M:crypto_one_time_aead(State, IV, D, <<>>),
    aead_reuse_loop(N - 1, M, State, IV, D).

%% The set-up alone: what every one-shot AEAD call repeats. No output.
-spec aead_setup(bridge_api:aead_cipher(), binary()) -> timed_call().
aead_setup(C, K) ->
    M = new_crypto(),
    {fun() -> _ = M:crypto_one_time_aead_init(C, K, 16, true), <<>> end,
     fun(N) -> aead_setup_loop(N, M, C, K) end}.

aead_setup_loop(0, _, _, _) -> ok;
aead_setup_loop(N, M, C, K) ->
    _ = M:crypto_one_time_aead_init(C, K, 16, true),
    aead_setup_loop(N - 1, M, C, K).

new_crypto() -> crypto.

%% ---------------------------------------------------------------------------
%% EdDSA: the raw key on every call, as crypto takes it.

-spec eddsa_sign(bridge_api:ed_curve(), binary(), binary()) -> timed_call().
eddsa_sign(Curve, Msg, Priv) ->
    Key = [Priv, Curve],
    {fun() -> crypto:sign(eddsa, none, Msg, Key) end, fun(N) -> eddsa_sign_loop(N, Msg, Key) end}.

eddsa_sign_loop(0, _, _) -> ok;
eddsa_sign_loop(N, Msg, Key) ->
    _ = crypto:sign(eddsa, none, Msg, Key),
    eddsa_sign_loop(N - 1, Msg, Key).

-spec eddsa_verify(bridge_api:ed_curve(), binary(), binary(), binary()) -> timed_call().
eddsa_verify(Curve, Msg, Sig, Pub) ->
    Key = [Pub, Curve],
    {fun() -> bool_bin(crypto:verify(eddsa, none, Msg, Sig, Key)) end,
     fun(N) -> eddsa_verify_loop(N, Msg, Sig, Key) end}.

eddsa_verify_loop(0, _, _, _) -> ok;
eddsa_verify_loop(N, Msg, Sig, Key) ->
    _ = crypto:verify(eddsa, none, Msg, Sig, Key),
    eddsa_verify_loop(N - 1, Msg, Sig, Key).

%% ---------------------------------------------------------------------------
%% RSA: the private key is crypto's list [E, N, D, P, Q, DP, DQ, QInv], the
%% public key [E, N]. Opts [] is PKCS#1 v1.5 through sign/4 and verify/5, as
%% a user writes it; PSS goes through sign/5 and verify/6.

-spec rsa_sign(bridge_api:digest(), binary(), [binary()], rsa_opts()) -> timed_call().
rsa_sign(Dg, Msg, Priv, Opts) ->
    {fun() -> rsa_sign_once(Dg, Msg, Priv, Opts) end,
     fun(N) -> rsa_sign_loop(N, Dg, Msg, Priv, Opts) end}.

rsa_sign_once(Dg, Msg, Priv, []) -> crypto:sign(rsa, Dg, Msg, Priv);
rsa_sign_once(Dg, Msg, Priv, Opts) -> crypto:sign(rsa, Dg, Msg, Priv, Opts).

rsa_sign_loop(0, _, _, _, _) -> ok;
rsa_sign_loop(N, Dg, Msg, Priv, []) ->
    _ = crypto:sign(rsa, Dg, Msg, Priv),
    rsa_sign_loop(N - 1, Dg, Msg, Priv, []);
rsa_sign_loop(N, Dg, Msg, Priv, Opts) ->
    _ = crypto:sign(rsa, Dg, Msg, Priv, Opts),
    rsa_sign_loop(N - 1, Dg, Msg, Priv, Opts).

-spec rsa_verify(bridge_api:digest(), binary(), binary(), [binary()], rsa_opts()) ->
          timed_call().
rsa_verify(Dg, Msg, Sig, Pub, Opts) ->
    {fun() -> bool_bin(rsa_verify_once(Dg, Msg, Sig, Pub, Opts)) end,
     fun(N) -> rsa_verify_loop(N, Dg, Msg, Sig, Pub, Opts) end}.

rsa_verify_once(Dg, Msg, Sig, Pub, []) -> crypto:verify(rsa, Dg, Msg, Sig, Pub);
rsa_verify_once(Dg, Msg, Sig, Pub, Opts) -> crypto:verify(rsa, Dg, Msg, Sig, Pub, Opts).

rsa_verify_loop(0, _, _, _, _, _) -> ok;
rsa_verify_loop(N, Dg, Msg, Sig, Pub, Opts) ->
    _ = rsa_verify_once(Dg, Msg, Sig, Pub, Opts),
    rsa_verify_loop(N - 1, Dg, Msg, Sig, Pub, Opts).

%% The key import alone: privkey_to_pubkey/2 turns the raw private key into
%% libcrypto's key (the work every sign/4 call repeats) and reads the public
%% part back. Once() returns the modulus, which the driver checks.
-spec rsa_import([binary()]) -> timed_call().
rsa_import(Priv) ->
    {fun() ->
         [_E, N] = crypto:privkey_to_pubkey(rsa, Priv),
         unsigned(N)
     end,
     fun(K) -> rsa_import_loop(K, Priv) end}.

unsigned(N) when is_integer(N) -> binary:encode_unsigned(N);
unsigned(B) when is_binary(B) -> B.

rsa_import_loop(0, _) -> ok;
rsa_import_loop(K, Priv) ->
    _ = crypto:privkey_to_pubkey(rsa, Priv),
    rsa_import_loop(K - 1, Priv).

%% ---------------------------------------------------------------------------
%% Key agreement: compute_key(ecdh, ...) takes X25519 and the NIST curves
%% alike. The static call imports both raw keys each time; the fresh one
%% makes a new key pair first and returns its public key before the secret,
%% so that the driver can derive the same secret.

-spec agree(bridge_api:agreement_curve(), binary(), binary()) -> timed_call().
agree(Curve, PeerPub, Priv) ->
    {fun() -> crypto:compute_key(ecdh, PeerPub, Priv, Curve) end,
     fun(N) -> agree_loop(N, Curve, PeerPub, Priv) end}.

agree_loop(0, _, _, _) -> ok;
agree_loop(N, Curve, PeerPub, Priv) ->
    _ = crypto:compute_key(ecdh, PeerPub, Priv, Curve),
    agree_loop(N - 1, Curve, PeerPub, Priv).

-spec agree_fresh(bridge_api:agreement_curve(), binary()) -> timed_call().
agree_fresh(Curve, PeerPub) ->
    {fun() ->
         {Pub, Priv} = crypto:generate_key(ecdh, Curve),
         <<Pub/binary, (crypto:compute_key(ecdh, PeerPub, Priv, Curve))/binary>>
     end,
     fun(N) -> agree_fresh_loop(N, Curve, PeerPub) end}.

agree_fresh_loop(0, _, _) -> ok;
agree_fresh_loop(N, Curve, PeerPub) ->
    {_, Priv} = crypto:generate_key(ecdh, Curve),
    _ = crypto:compute_key(ecdh, PeerPub, Priv, Curve),
    agree_fresh_loop(N - 1, Curve, PeerPub).
