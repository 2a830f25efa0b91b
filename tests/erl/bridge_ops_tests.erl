%% EUnit tests for bridge_ops: every API branch forced with a fake
%% function_exported/3, the digest table, and the measurement loop.
-module(bridge_ops_tests).

-include_lib("eunit/include/eunit.hrl").

exported(List) ->
    fun(M, F, A) -> lists:member({M, F, A}, List) end.

%% OTP 22.1+: crypto:macN/5 and crypto:mac/4 exist.
mac_api_new_test() ->
    E = exported([{crypto, macN, 5}, {crypto, mac, 4}, {crypto, hmac, 4}]),
    ?assertEqual(macN, bridge_ops:mac_api(E, 10)),
    ?assertEqual(mac, bridge_ops:mac_api(E, 0)).

%% OTP 21 - 22.0: only the old crypto:hmac/3,4.
mac_api_old_test() ->
    E = exported([{crypto, hmac, 3}, {crypto, hmac, 4}]),
    ?assertEqual(hmac4, bridge_ops:mac_api(E, 10)),
    ?assertEqual(hmac3, bridge_ops:mac_api(E, 0)).

%% Neither: the call is reported unsupported, not crashed.
mac_api_none_test() ->
    ?assertEqual(none, bridge_ops:mac_api(exported([]), 10)).

hash_api_test() ->
    ?assertEqual(hash, bridge_ops:hash_api(exported([{crypto, hash, 2}]))),
    ?assertEqual(none, bridge_ops:hash_api(exported([]))).

%% The real node picks the branch its crypto has.
mac_api_real_test() ->
    Api = bridge_ops:mac_api(fun erlang:function_exported/3, 10),
    ?assert(lists:member(Api, [macN, hmac4])).

digest_table_test() ->
    ?assertEqual({ok, sha}, bridge_ops:digest(<<"sha1">>)),
    ?assertEqual({ok, sha256}, bridge_ops:digest(<<"sha256">>)),
    ?assertMatch({error, {bad_request, _}}, bridge_ops:digest(<<"os:cmd">>)).

unknown_operation_test() ->
    ?assertMatch({error, {unknown_op, _}}, bridge_ops:handle(<<"eval">>, [])).

bench_missing_argument_test() ->
    ?assertMatch({error, {bad_request, <<"missing argument: ", _/binary>>}},
                 bridge_ops:handle(<<"bench">>, [{<<"call">>, <<"mac">>}])).

bench_rejects_out_of_range_samples_test() ->
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"x">>},
            {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 1000}, {<<"samples">>, 0}],
    ?assertMatch({error, {bad_request, _}}, bridge_ops:handle(<<"bench">>, Args)).

%% Calibration: loops grow until one run lasts half a sample, then the
%% requested number of samples is taken with that loop count.
measure_test() ->
    Loop = fun(N) -> spin(N) end,
    {Loops, Durations, Spent} = bridge_ops:measure(Loop, {1000000, 2000000}, 4),
    ?assert(Loops >= 1),
    ?assertEqual(4, length(Durations)),
    ?assert(lists:all(fun(D) -> D > 0 end, Durations)),
    ?assert(Spent >= 1000000).

spin(0) -> ok;
spin(N) -> _ = erlang:phash2(N), spin(N - 1).

%% crypto:info/0 exists from OTP 24.2; before that only info_lib/0 answers.
crypto_info_new_test() ->
    Info = bridge_ops:crypto_info(exported([{crypto, info, 0}])),
    ?assertMatch({_, _}, lists:keyfind(otp_crypto_version, 1, Info)),
    ?assert(lists:all(fun({_, V}) -> not is_list(V) end, Info)).  % no charlists on the wire

crypto_info_old_test() ->
    ?assertEqual([], bridge_ops:crypto_info(exported([]))).

%% The measurement with a known loop count (later rounds).
measure_fixed_test() ->
    {Loops, Durations, Spent} = bridge_ops:measure_fixed(fun(N) -> spin(N) end, 0, 100, 3),
    ?assertEqual(100, Loops),
    ?assertEqual(3, length(Durations)),
    ?assertEqual(0, Spent).

%% The streaming API: mac_init/3 from OTP 22.1, hmac_init/2 before.
stream_api_test() ->
    ?assertEqual(mac_init, bridge_ops:stream_api(exported([{crypto, mac_init, 3}]))),
    ?assertEqual(hmac_init, bridge_ops:stream_api(exported([{crypto, hmac_init, 2}]))),
    ?assertEqual(none, bridge_ops:stream_api(exported([]))).

%% The thread's statistics, quirks included: median = nth(round((N-1)/2)).
thread_stats_test() ->
    Stats = bridge_ops:thread_stats([3, 4, 3, 5, 0, 3]),
    ?assertEqual(0, proplists:get_value(min_us, Stats)),
    ?assertEqual(5, proplists:get_value(max_us, Stats)),
    ?assertEqual(3, proplists:get_value(median_us, Stats)),
    ?assertEqual(3, proplists:get_value(avg_us, Stats)),
    ?assertEqual(1, proplists:get_value(zero_us_calls, Stats)).

%% The streaming call computes the same MAC as the one-shot one.
mac_stream_matches_one_shot_test() ->
    Args = [{<<"call">>, <<"mac_stream">>}, {<<"digest">>, <<"sha1">>}, {<<"key">>, <<1:160>>},
            {<<"data">>, <<"hello">>}, {<<"mac_bytes">>, 10}, {<<"warmup_ns">>, 0},
            {<<"sample_ns">>, 1000}, {<<"samples">>, 1}],
    {ok, Reply} = bridge_ops:handle(<<"bench">>, Args),
    ?assertEqual(crypto:macN(hmac, sha, <<1:160>>, <<"hello">>, 10),
                 proplists:get_value(output, Reply)).

%% Ciphers: crypto_one_time(_aead) from OTP 22, block_encrypt/4 on OTP 21.
cipher_api_test() ->
    New = exported([{crypto, crypto_one_time, 5}, {crypto, crypto_one_time_aead, 7}]),
    Old = exported([{crypto, block_encrypt, 4}]),
    ?assertEqual(one_time, bridge_ops:cipher_api(New, cbc)),
    ?assertEqual(one_time_aead, bridge_ops:cipher_api(New, aead)),
    ?assertEqual(block, bridge_ops:cipher_api(Old, cbc)),
    ?assertEqual(block, bridge_ops:cipher_api(Old, aead)),
    ?assertEqual(none, bridge_ops:cipher_api(exported([]), cbc)).

cipher_gcm_appends_tag_test() ->
    Args = [{<<"call">>, <<"cipher">>}, {<<"cipher">>, <<"aes-256-gcm">>}, {<<"key">>, <<0:256>>},
            {<<"iv">>, <<0:96>>}, {<<"data">>, <<0:256>>}, {<<"warmup_ns">>, 0},
            {<<"sample_ns">>, 1000}, {<<"samples">>, 1}],
    {ok, Reply} = bridge_ops:handle(<<"bench">>, Args),
    ?assertEqual(48, byte_size(proplists:get_value(output, Reply))).
