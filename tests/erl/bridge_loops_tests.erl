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
