%% EUnit tests for bridge_ops: the closed set of operations, argument errors
%% turned into replies, and whole bench requests on the real crypto.
-module(bridge_ops_tests).

-include_lib("eunit/include/eunit.hrl").

unknown_operation_test() ->
    ?assertMatch({error, {unknown_op, _}}, bridge_ops:handle(<<"eval">>, [])).

bench_missing_argument_test() ->
    ?assertMatch({error, {bad_request, <<"missing argument: ", _/binary>>}},
                 bridge_ops:handle(<<"bench">>, [{<<"call">>, <<"mac">>}])).

bench_rejects_out_of_range_samples_test() ->
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"x">>},
            {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 1000}, {<<"samples">>, 0}],
    ?assertMatch({error, {bad_request, _}}, bridge_ops:handle(<<"bench">>, Args)).

%% The streaming call computes the same MAC as the one-shot one.
mac_stream_matches_one_shot_test() ->
    Args = [{<<"call">>, <<"mac_stream">>}, {<<"digest">>, <<"sha1">>}, {<<"key">>, <<1:160>>},
            {<<"data">>, <<"hello">>}, {<<"mac_bytes">>, 10}, {<<"warmup_ns">>, 0},
            {<<"sample_ns">>, 1000}, {<<"samples">>, 1}],
    {ok, Reply} = bridge_ops:handle(<<"bench">>, Args),
    ?assertEqual(crypto:macN(hmac, sha, <<1:160>>, <<"hello">>, 10),
                 proplists:get_value(output, Reply)).

%% The parts of an HMAC call: the API each reply names, and the floor's
%% operand as long as the MAC (mac_bytes, or the digest's length).
hmac_parts_test() ->
    Common = [{<<"digest">>, <<"sha256">>}, {<<"key">>, <<1:160>>}, {<<"data">>, <<"hello">>},
              {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 1000}, {<<"samples">>, 1}],
    {ok, Key} = bridge_ops:handle(<<"bench">>, [{<<"call">>, <<"mac_key">>} | Common]),
    ?assertEqual(<<"crypto:mac_init/3">>, proplists:get_value(api, Key)),
    ?assertEqual(<<>>, proplists:get_value(output, Key)),
    Floor = fun(MacBytes) ->
                {ok, R} = bridge_ops:handle(<<"bench">>, [{<<"call">>, <<"nif_floor">>},
                                                          {<<"mac_bytes">>, MacBytes} | Common]),
                ?assertEqual(<<"crypto:exor/2">>, proplists:get_value(api, R)),
                proplists:get_value(output, R)
            end,
    ?assertEqual(<<0:80>>, Floor(10)),
    ?assertEqual(<<0:256>>, Floor(0)).

cipher_gcm_appends_tag_test() ->
    Args = [{<<"call">>, <<"cipher">>}, {<<"cipher">>, <<"aes-256-gcm">>}, {<<"key">>, <<0:256>>},
            {<<"iv">>, <<0:96>>}, {<<"data">>, <<0:256>>}, {<<"warmup_ns">>, 0},
            {<<"sample_ns">>, 1000}, {<<"samples">>, 1}],
    {ok, Reply} = bridge_ops:handle(<<"bench">>, Args),
    ?assertEqual(48, byte_size(proplists:get_value(output, Reply))).

%% A bench reply's keys, in order: the driver reads them by name, but the
%% order is what every release so far has sent.
bench_reply_shape_test() ->
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"x">>},
            {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 1000}, {<<"samples">>, 2}, {<<"loops">>, 3}],
    {ok, Reply} = bridge_ops:handle(<<"bench">>, Args),
    ?assertEqual([api, loops, samples, output, warmup_ns], [K || {K, _} <- Reply]),
    ?assertEqual(<<"crypto:hash/2">>, proplists:get_value(api, Reply)),
    ?assertEqual(3, proplists:get_value(loops, Reply)),
    ?assertEqual(2, length(proplists:get_value(samples, Reply))),
    ?assertEqual(crypto:hash(sha256, <<"x">>), proplists:get_value(output, Reply)).

%% A crypto error in the first call becomes a reply with a class, once.
bench_bad_key_is_bad_request_test() ->
    Args = [{<<"call">>, <<"cipher">>}, {<<"cipher">>, <<"aes-256-gcm">>}, {<<"key">>, <<0:8>>},
            {<<"iv">>, <<0:96>>}, {<<"data">>, <<0:256>>}, {<<"warmup_ns">>, 0},
            {<<"sample_ns">>, 1000}, {<<"samples">>, 1}],
    ?assertMatch({error, {bad_request, _}}, bridge_ops:handle(<<"bench">>, Args)).

unknown_call_test() ->
    Args = [{<<"call">>, <<"eval">>}, {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 1000},
            {<<"samples">>, 1}],
    ?assertEqual({error, {unknown_call, <<"unknown call: eval">>}},
                 bridge_ops:handle(<<"bench">>, Args)).

tc_reply_shape_test() ->
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"x">>},
            {<<"n">>, 5}],
    {ok, Reply} = bridge_ops:handle(<<"tc">>, Args),
    ?assertEqual([api, n, min_us, max_us, median_us, avg_us, zero_us_calls],
                 [K || {K, _} <- Reply]),
    ?assertEqual(<<"crypto:hash/2">>, proplists:get_value(api, Reply)).

tc_unknown_call_test() ->
    Args = [{<<"call">>, <<"cipher">>}, {<<"data">>, <<"x">>}, {<<"n">>, 5}],
    ?assertEqual({error, {unknown_call, <<"tc has no call cipher">>}},
                 bridge_ops:handle(<<"tc">>, Args)).

greeting_test() ->
    ?assertEqual(bridge_info:greeting(), bridge_ops:greeting()).

%% load_permille is optional; when given it must be 1..1000.
bench_rejects_out_of_range_load_test() ->
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"x">>},
            {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 1000}, {<<"samples">>, 1},
            {<<"load_permille">>, 0}],
    ?assertMatch({error, {bad_request, _}}, bridge_ops:handle(<<"bench">>, Args)).

bench_with_duty_cycle_test() ->
    Args = [{<<"call">>, <<"hash">>}, {<<"digest">>, <<"sha256">>}, {<<"data">>, <<"x">>},
            {<<"warmup_ns">>, 0}, {<<"sample_ns">>, 100000}, {<<"samples">>, 2},
            {<<"load_permille">>, 500}],
    {ok, Reply} = bridge_ops:handle(<<"bench">>, Args),
    ?assertEqual(crypto:hash(sha256, <<"x">>), proplists:get_value(output, Reply)).
