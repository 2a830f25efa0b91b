%% EUnit tests for bridge_api: every API branch forced with a fake
%% function_exported/3, the label of every API, and the name tables.
-module(bridge_api_tests).

-include_lib("eunit/include/eunit.hrl").

%% A fake erlang:function_exported/3 that knows only List.
exported(List) ->
    fun(M, F, A) -> lists:member({M, F, A}, List) end.

%% OTP 22.1+: crypto:macN/5 and crypto:mac/4 exist.
mac_api_new_test() ->
    E = exported([{crypto, macN, 5}, {crypto, mac, 4}, {crypto, hmac, 4}]),
    ?assertEqual(macN, bridge_api:mac_api(E, 10)),
    ?assertEqual(mac, bridge_api:mac_api(E, 0)).

%% OTP 21 - 22.0: only the old crypto:hmac/3,4.
mac_api_old_test() ->
    E = exported([{crypto, hmac, 3}, {crypto, hmac, 4}]),
    ?assertEqual(hmac4, bridge_api:mac_api(E, 10)),
    ?assertEqual(hmac3, bridge_api:mac_api(E, 0)).

%% Neither: the call is reported unsupported, not crashed.
mac_api_none_test() ->
    ?assertEqual(none, bridge_api:mac_api(exported([]), 10)).

hash_api_test() ->
    ?assertEqual(hash, bridge_api:hash_api(exported([{crypto, hash, 2}]))),
    ?assertEqual(none, bridge_api:hash_api(exported([]))).

%% The real node picks the branch its crypto has.
mac_api_real_test() ->
    Api = bridge_api:mac_api(fun erlang:function_exported/3, 10),
    ?assert(lists:member(Api, [macN, hmac4])).

%% The streaming API: mac_init/3 from OTP 22.1, hmac_init/2 before.
stream_api_test() ->
    ?assertEqual(mac_init, bridge_api:stream_api(exported([{crypto, mac_init, 3}]))),
    ?assertEqual(hmac_init, bridge_api:stream_api(exported([{crypto, hmac_init, 2}]))),
    ?assertEqual(none, bridge_api:stream_api(exported([]))).

%% Ciphers: crypto_one_time(_aead) from OTP 22, block_encrypt/4 on OTP 21.
cipher_api_test() ->
    New = exported([{crypto, crypto_one_time, 5}, {crypto, crypto_one_time_aead, 7}]),
    Old = exported([{crypto, block_encrypt, 4}]),
    ?assertEqual(one_time, bridge_api:cipher_api(New, cbc)),
    ?assertEqual(one_time_aead, bridge_api:cipher_api(New, aead)),
    ?assertEqual(block, bridge_api:cipher_api(Old, cbc)),
    ?assertEqual(block, bridge_api:cipher_api(Old, aead)),
    ?assertEqual(none, bridge_api:cipher_api(exported([]), cbc)).

%% The labels are part of the wire protocol: the driver shows them, and
%% reports compare them across machines.
api_name_test() ->
    Labels = [{macN, <<"crypto:macN/5">>},
              {mac, <<"crypto:mac/4">>},
              {hmac4, <<"crypto:hmac/4">>},
              {hmac3, <<"crypto:hmac/3">>},
              {hash, <<"crypto:hash/2">>},
              {sign, <<"crypto:sign/4">>},
              {verify, <<"crypto:verify/5">>},
              {hash_file, <<"crypto:hash_init/1 + hash_update/2 per file:read/2 chunk + hash_final/1">>},
              {one_time, <<"crypto:crypto_one_time/5">>},
              {one_time_aead, <<"crypto:crypto_one_time_aead/7">>},
              {block, <<"crypto:block_encrypt/4">>},
              {mac_init, <<"crypto:mac_init/3 + mac_update/2 + mac_finalN/2">>},
              {hmac_init, <<"crypto:hmac_init/2 + hmac_update/2 + hmac_final_n/2">>},
              {mac_key, <<"crypto:mac_init/3">>},
              {hmac_key, <<"crypto:hmac_init/2">>},
              {exor, <<"crypto:exor/2">>},
              {none, <<"none">>}],
    [?assertEqual(Label, bridge_api:api_name(Api)) || {Api, Label} <- Labels].

digest_table_test() ->
    ?assertEqual({ok, sha}, bridge_api:digest(<<"sha1">>)),
    ?assertEqual({ok, sha256}, bridge_api:digest(<<"sha256">>)),
    ?assertMatch({error, {bad_request, _}}, bridge_api:digest(<<"os:cmd">>)).

cipher_table_test() ->
    ?assertEqual({ok, {aes_128_cbc, cbc}}, bridge_api:cipher(<<"aes-128-cbc">>)),
    ?assertEqual({ok, {aes_256_gcm, aead}}, bridge_api:cipher(<<"aes-256-gcm">>)),
    ?assertEqual({error, {bad_request, <<"unknown cipher: rc4">>}}, bridge_api:cipher(<<"rc4">>)).

curve_table_test() ->
    ?assertEqual({ok, secp256r1}, bridge_api:curve(<<"p256">>)),
    ?assertEqual({ok, secp521r1}, bridge_api:curve(<<"p521">>)),
    ?assertEqual({error, {bad_request, <<"unknown curve: p999">>}}, bridge_api:curve(<<"p999">>)).

%% A long name is cut when quoted back, so a reply stays small.
long_name_is_cut_test() ->
    Long = binary:copy(<<"x">>, 100),
    {error, {bad_request, Message}} = bridge_api:digest(Long),
    ?assertEqual(<<"unknown digest: ", (binary:copy(<<"x">>, 40))/binary, "...">>, Message).

%% crypto:pbkdf2_hmac/5 from OTP 24.2; before it the call is unsupported.
pbkdf2_api_test() ->
    ?assertEqual(pbkdf2_hmac, bridge_api:pbkdf2_api(exported([{crypto, pbkdf2_hmac, 5}]))),
    ?assertEqual(none, bridge_api:pbkdf2_api(exported([]))).

%% The reusable AEAD state needs both OTP 28 functions; crypto_one_time_aead/4
%% alone (or crypto_init/4, which refuses AEAD ciphers) is not enough.
aead_reuse_api_test() ->
    Both = [{crypto, crypto_one_time_aead_init, 4}, {crypto, crypto_one_time_aead, 4}],
    ?assertEqual(aead_init, bridge_api:aead_reuse_api(exported(Both))),
    ?assertEqual(none, bridge_api:aead_reuse_api(exported(tl(Both)))),
    ?assertEqual(none, bridge_api:aead_reuse_api(exported([{crypto, crypto_init, 4},
                                                           {crypto, crypto_one_time_aead, 7}]))).

import_api_test() ->
    ?assertEqual(privkey_to_pubkey,
                 bridge_api:import_api(exported([{crypto, privkey_to_pubkey, 2}]))),
    ?assertEqual(none, bridge_api:import_api(exported([]))).

%% The real node: pbkdf2 from 24.2, the AEAD state from 28.
real_release_apis_test() ->
    Release = list_to_integer(erlang:system_info(otp_release)),
    Real = fun erlang:function_exported/3,
    case Release of
        R when R >= 25 -> ?assertEqual(pbkdf2_hmac, bridge_api:pbkdf2_api(Real));
        R when R =< 23 -> ?assertEqual(none, bridge_api:pbkdf2_api(Real));
        _ -> ok  % OTP 24: from 24.2
    end,
    ?assertEqual(Release >= 28, bridge_api:aead_reuse_api(Real) =:= aead_init).

new_api_names_test() ->
    Labels = [{strong_rand_bytes, <<"crypto:strong_rand_bytes/1">>},
              {pbkdf2_hmac, <<"crypto:pbkdf2_hmac/5">>},
              {aead_init, <<"crypto:crypto_one_time_aead_init/4 + crypto_one_time_aead/4">>},
              {aead_init_only, <<"crypto:crypto_one_time_aead_init/4">>},
              {sign_opts, <<"crypto:sign/5">>},
              {verify_opts, <<"crypto:verify/6">>},
              {privkey_to_pubkey, <<"crypto:privkey_to_pubkey/2">>},
              {compute_key, <<"crypto:compute_key/4">>},
              {generate_compute, <<"crypto:generate_key/2 + compute_key/4">>}],
    [?assertEqual(Label, bridge_api:api_name(Api)) || {Api, Label} <- Labels].

new_name_tables_test() ->
    ?assertEqual({ok, blake2b}, bridge_api:digest(<<"blake2b512">>)),
    ?assertEqual({ok, {chacha20_poly1305, aead}}, bridge_api:cipher(<<"chacha20-poly1305">>)),
    ?assertEqual({ok, ed25519}, bridge_api:ed_curve(<<"ed25519">>)),
    ?assertMatch({error, {bad_request, _}}, bridge_api:ed_curve(<<"ed448">>)),
    ?assertEqual({ok, x25519}, bridge_api:agreement_curve(<<"x25519">>)),
    ?assertEqual({ok, secp256r1}, bridge_api:agreement_curve(<<"p256">>)),
    ?assertEqual({error, {bad_request, <<"unknown agreement curve: p999">>}},
                 bridge_api:agreement_curve(<<"p999">>)).
