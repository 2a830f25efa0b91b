%% EUnit tests for bridge_loops: each call's Once gives the bytes crypto
%% gives for the same call, and its Loop runs.
-module(bridge_loops_tests).

-include_lib("eunit/include/eunit.hrl").

-define(KEY, <<1:160>>).
-define(DATA, <<"hello">>).

%% Once() is the reference output; Loop(N) must run N calls and return ok.
check({Once, Loop}, Expected) ->
    ?assertEqual(Expected, Once()),
    ?assertEqual(ok, Loop(3)).

mac_test() ->
    check(bridge_loops:mac(macN, sha, ?KEY, ?DATA, 10), crypto:macN(hmac, sha, ?KEY, ?DATA, 10)),
    check(bridge_loops:mac(mac, sha256, ?KEY, ?DATA, 0), crypto:mac(hmac, sha256, ?KEY, ?DATA)).

mac_stream_test() ->
    check(bridge_loops:mac_stream(mac_init, sha, ?KEY, ?DATA, 10),
          crypto:macN(hmac, sha, ?KEY, ?DATA, 10)),
    check(bridge_loops:mac_stream(mac_init, sha, ?KEY, ?DATA, 0),
          crypto:mac(hmac, sha, ?KEY, ?DATA)).

%% The parts of an HMAC call (hmac-parts): the key set-up alone makes a MAC
%% context and gives no bytes; the floor is crypto:exor/2 on MAC-sized binaries.
mac_key_test() ->
    {Once, Loop} = bridge_loops:mac_key(mac_init, sha, ?KEY),
    ?assertEqual(<<>>, Once()),
    ?assertEqual(ok, Loop(3)).

nif_floor_test() ->
    check(bridge_loops:nif_floor(<<1, 2, 3>>), <<0, 0, 0>>).

%% tc times the same call, given as {M, F, A}.
mac_mfa_test() ->
    {M, F, A} = bridge_loops:mac_mfa(macN, sha, ?KEY, ?DATA, 10),
    ?assertEqual(crypto:macN(hmac, sha, ?KEY, ?DATA, 10), apply(M, F, A)),
    ?assertEqual({crypto, hmac, [sha, ?KEY, ?DATA]}, bridge_loops:mac_mfa(hmac3, sha, ?KEY, ?DATA, 0)).

cipher_test() ->
    K = <<0:128>>, IV = <<0:128>>, D = <<0:256>>,
    check(bridge_loops:cipher(one_time, aes_128_cbc, K, IV, D),
          crypto:crypto_one_time(aes_128_cbc, K, IV, D, true)),
    {CT, Tag} = crypto:crypto_one_time_aead(aes_128_gcm, K, <<0:96>>, D, <<>>, 16, true),
    check(bridge_loops:cipher(one_time_aead, aes_128_gcm, K, <<0:96>>, D), <<CT/binary, Tag/binary>>).

%% ECDSA signatures are random: the signature must verify, and verify's
%% output is one byte.
sign_verify_test() ->
    {Pub, Priv} = crypto:generate_key(ecdh, secp256r1),
    {Sign, SignLoop} = bridge_loops:sign(sha256, secp256r1, ?DATA, Priv),
    Sig = Sign(),
    ?assert(crypto:verify(ecdsa, sha256, ?DATA, Sig, [Pub, secp256r1])),
    ?assertEqual(ok, SignLoop(2)),
    check(bridge_loops:verify(sha256, secp256r1, ?DATA, Sig, Pub), <<1>>),
    {Refused, _} = bridge_loops:verify(sha256, secp256r1, <<"other">>, Sig, Pub),
    ?assertEqual(<<0>>, Refused()).

hash_test() ->
    check(bridge_loops:hash(sha512, ?DATA), crypto:hash(sha512, ?DATA)).

%% A file read in chunks smaller than the file digests as the whole file.
hash_file_test() ->
    Path = filename:join(os:getenv("TMPDIR", "/tmp"),
                         "bridge_loops_tests." ++ os:getpid() ++ ".bin"),
    Content = crypto:strong_rand_bytes(10000),
    ok = file:write_file(Path, Content),
    try
        check(bridge_loops:hash_file(sha256, list_to_binary(Path), 4096),
              crypto:hash(sha256, Content))
    after
        ok = file:delete(Path)
    end.

%% Random bytes: Once() is two calls of N bytes each, which differ.
rand_bytes_test() ->
    {Once, Loop} = bridge_loops:rand_bytes(16),
    <<A:16/binary, B:16/binary>> = Once(),
    ?assertNotEqual(A, B),
    ?assertEqual(ok, Loop(3)).

pbkdf2_test() ->
    case erlang:function_exported(crypto, pbkdf2_hmac, 5) of
        true ->
            check(bridge_loops:pbkdf2(sha256, <<"pass">>, <<"salt">>, 1000, 32),
                  crypto:pbkdf2_hmac(sha256, <<"pass">>, <<"salt">>, 1000, 32));
        false ->
            ok  % before OTP 24.2: bridge_ops answers unsupported (bridge_ops_tests)
    end.

%% The reusable AEAD state exists from OTP 28: there the sealed packet equals
%% the one-shot call's, tag appended.
aead_reuse_test() ->
    K = <<7:128>>, IV = <<9:96>>, D = <<"a packet">>,
    case erlang:function_exported(crypto, crypto_one_time_aead_init, 4) of
        true ->
            {CT, Tag} = crypto:crypto_one_time_aead(aes_128_gcm, K, IV, D, <<>>, 16, true),
            check(bridge_loops:aead_reuse(aes_128_gcm, K, IV, D), <<CT/binary, Tag/binary>>),
            check(bridge_loops:aead_setup(aes_128_gcm, K), <<>>);
        false ->
            ok
    end.

chacha20_poly1305_one_shot_test() ->
    K = <<1:256>>, IV = <<2:96>>, D = <<"data">>,
    {CT, Tag} = crypto:crypto_one_time_aead(chacha20_poly1305, K, IV, D, <<>>, 16, true),
    check(bridge_loops:cipher(one_time_aead, chacha20_poly1305, K, IV, D), <<CT/binary, Tag/binary>>).

%% Ed25519 is deterministic: Once() is exactly crypto's signature.
eddsa_test() ->
    {Pub, Priv} = crypto:generate_key(eddsa, ed25519),
    Sig = crypto:sign(eddsa, none, ?DATA, [Priv, ed25519]),
    check(bridge_loops:eddsa_sign(ed25519, ?DATA, Priv), Sig),
    check(bridge_loops:eddsa_verify(ed25519, ?DATA, Sig, Pub), <<1>>),
    {Refused, _} = bridge_loops:eddsa_verify(ed25519, <<"other">>, Sig, Pub),
    ?assertEqual(<<0>>, Refused()).

rsa_key() ->
    {_Pub, Priv} = crypto:generate_key(rsa, {1024, 65537}),
    [bin(I) || I <- Priv].

bin(I) when is_integer(I) -> binary:encode_unsigned(I);
bin(B) -> B.

%% PKCS#1 v1.5 is deterministic; PSS is not, so its signature must verify.
rsa_test() ->
    Priv = rsa_key(),
    Pub = lists:sublist(Priv, 2),
    Pss = [{rsa_padding, rsa_pkcs1_pss_padding}, {rsa_pss_saltlen, 32}, {rsa_mgf1_md, sha256}],
    Sig = crypto:sign(rsa, sha256, ?DATA, Priv),
    check(bridge_loops:rsa_sign(sha256, ?DATA, Priv, []), Sig),
    check(bridge_loops:rsa_verify(sha256, ?DATA, Sig, Pub, []), <<1>>),
    {SignPss, SignPssLoop} = bridge_loops:rsa_sign(sha256, ?DATA, Priv, Pss),
    PssSig = SignPss(),
    ?assertEqual(ok, SignPssLoop(2)),
    ?assert(crypto:verify(rsa, sha256, ?DATA, PssSig, Pub, Pss)),
    check(bridge_loops:rsa_verify(sha256, ?DATA, PssSig, Pub, Pss), <<1>>),
    {Refused, _} = bridge_loops:rsa_verify(sha256, ?DATA, Sig, Pub, Pss),
    ?assertEqual(<<0>>, Refused()).

%% The import alone hands back the modulus.
rsa_import_test() ->
    Priv = rsa_key(),
    check(bridge_loops:rsa_import(Priv), lists:nth(2, Priv)).

%% The static secret is the one the peer computes; a fresh pair's secret is
%% what the peer derives from the fresh public key.
agree_test() ->
    [agree_on(Curve, PubBytes) || {Curve, PubBytes} <- [{x25519, 32}, {secp256r1, 65}]].

agree_on(Curve, PubBytes) ->
    {PeerPub, PeerPriv} = crypto:generate_key(ecdh, Curve),
    {Pub, Priv} = crypto:generate_key(ecdh, Curve),
    check(bridge_loops:agree(Curve, PeerPub, Priv), crypto:compute_key(ecdh, Pub, PeerPriv, Curve)),
    {Fresh, Loop} = bridge_loops:agree_fresh(Curve, PeerPub),
    <<FreshPub:PubBytes/binary, Secret/binary>> = Fresh(),
    ?assertEqual(crypto:compute_key(ecdh, FreshPub, PeerPriv, Curve), Secret),
    ?assertEqual(ok, Loop(2)).

%% A state that cannot be made (a bad key; on OTP < 28 the function itself is
%% missing) fails in Once(), where bridge_ops turns it into an error reply.
aead_reuse_failure_is_raised_by_once_test() ->
    {Once, Loop} = bridge_loops:aead_reuse(aes_128_gcm, <<1>>, <<0:96>>, <<"x">>),
    ?assertError(_, Once()),
    ?assertEqual(ok, Loop(1)).
