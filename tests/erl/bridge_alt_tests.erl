%% EUnit tests for bridge_alt, the opt-in alternatives: each must compute
%% what the call it stands beside computes, or the comparison means nothing.
-module(bridge_alt_tests).

-include_lib("eunit/include/eunit.hrl").

%% PBKDF2 written over crypto:mac equals crypto:pbkdf2_hmac/5, for one
%% iteration and many, for one output block and several (64 bytes of
%% SHA-256 are two blocks; 20 bytes of SHA-512 a part of one).
pbkdf2_equals_crypto_test_() ->
    Cases = [{sha256, 1, 32}, {sha256, 1000, 32}, {sha256, 3, 64}, {sha, 7, 50},
             {sha512, 2, 20}],
    [?_assertEqual(crypto:pbkdf2_hmac(Dg, <<"pass">>, <<"salt">>, Iter, Len),
                   once(bridge_alt:pbkdf2(Api, Dg, <<"pass">>, <<"salt">>, Iter, Len)))
     || {Dg, Iter, Len} <- Cases, Api <- [pbkdf2_mac, pbkdf2_mac_stream]].

%% RFC 6070's first vector, for a fixed point beside crypto's own.
pbkdf2_rfc6070_test() ->
    ?assertEqual(<<16#0c60c80f961f0e71f3a9b524af6012062fe037a6:160>>,
                 once(bridge_alt:pbkdf2(pbkdf2_mac, sha, <<"password">>, <<"salt">>, 1, 20))).

hash_stream_equals_hash_test() ->
    Data = binary:copy(<<"x">>, 1000),
    ?assertEqual(crypto:hash(sha256, Data), once(bridge_alt:hash_stream(sha256, Data))).

%% rand:bytes gives two different outputs of the length asked for.
rand_bytes_test() ->
    case bridge_alt:has_rand_bytes() of
        false -> ok;
        true ->
            <<A:20/binary, B:20/binary>> = once(bridge_alt:rand_bytes(20)),
            ?assertNotEqual(A, B)
    end.

%% public_key signs with the given key (crypto verifies it) and verifies
%% crypto's signature; a wrong signature is refused.
public_key_test() ->
    case bridge_alt:has_public_key() of
        false -> ok;
        true ->
            {Pub, Priv} = crypto:generate_key(ecdh, secp256r1),
            Msg = <<"message">>,
            Sig = once(bridge_alt:pk_sign(sha256, secp256r1, Msg, {Priv, Pub})),
            ?assert(crypto:verify(ecdsa, sha256, Msg, Sig, [Pub, secp256r1])),
            Theirs = crypto:sign(ecdsa, sha256, Msg, [Priv, secp256r1]),
            ?assertEqual(<<1>>, once(bridge_alt:pk_verify(sha256, secp256r1, Msg, Theirs, Pub))),
            ?assertEqual(<<0>>, once(bridge_alt:pk_verify(sha256, secp256r1, <<"other">>, Theirs,
                                                          Pub)))
    end.

%% The loops run N calls and return ok.
loops_test() ->
    {_, Loop} = bridge_alt:hash_stream(sha256, <<"abc">>),
    ?assertEqual(ok, Loop(3)).

once({Once, _Loop}) -> Once().
