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
    %% On Linux, per sample: the CPU, CPU ns and wait ns (bridge_measure:run_probed/3).
    Probed = case bridge_measure:probe_threads() of
                 [] -> [];
                 _ -> [cpus, cpu_ns, wait_ns]
             end,
    ?assertEqual([api, loops, samples, output, warmup_ns | Probed], [K || {K, _} <- Reply]),
    [?assertEqual(2, length(proplists:get_value(K, Reply))) || K <- Probed],
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

bench(Call, Extra) ->
    bridge_ops:handle(<<"bench">>, [{<<"call">>, Call}, {<<"warmup_ns">>, 0},
                                    {<<"sample_ns">>, 1000}, {<<"samples">>, 1} | Extra]).

%% A call this release lacks is an unsupported reply that names the release.
pbkdf2_by_release_test() ->
    Args = [{<<"digest">>, <<"sha256">>}, {<<"key">>, <<"p">>}, {<<"iv">>, <<"salt">>},
            {<<"count">>, 10}, {<<"key_bytes">>, 32}],
    case erlang:function_exported(crypto, pbkdf2_hmac, 5) of
        true ->
            {ok, Reply} = bench(<<"pbkdf2">>, Args),
            ?assertEqual(<<"crypto:pbkdf2_hmac/5">>, proplists:get_value(api, Reply));
        false ->
            {error, {unsupported, Why}} = bench(<<"pbkdf2">>, Args),
            ?assertMatch({_, _}, binary:match(Why, <<"OTP 24.2">>))
    end.

aead_reuse_by_release_test() ->
    Args = [{<<"cipher">>, <<"aes-128-gcm">>}, {<<"key">>, <<0:128>>}, {<<"iv">>, <<0:96>>},
            {<<"data">>, <<"x">>}],
    case erlang:function_exported(crypto, crypto_one_time_aead_init, 4) of
        true ->
            ?assertMatch({ok, _}, bench(<<"aead_reuse">>, Args));
        false ->
            {error, {unsupported, Why}} = bench(<<"aead_reuse">>, Args),
            ?assertMatch({_, _}, binary:match(Why, <<"OTP 28">>)),
            ?assertMatch({error, {unsupported, _}}, bench(<<"aead_setup">>, Args))
    end,
    ?assertMatch({error, {bad_request, <<"not an AEAD cipher">>}},
                 bench(<<"aead_reuse">>, [{<<"cipher">>, <<"aes-128-cbc">>} | tl(Args)])).

random_bytes_reply_test() ->
    {ok, Reply} = bench(<<"rand_bytes">>, [{<<"count">>, 1000}]),
    ?assertEqual(2000, byte_size(proplists:get_value(output, Reply))),
    ?assertMatch({error, {bad_request, _}}, bench(<<"rand_bytes">>, [{<<"count">>, 0}])).

rsa_reply_test() ->
    {_, Priv} = crypto:generate_key(rsa, {1024, 65537}),
    Parts = [if is_integer(I) -> binary:encode_unsigned(I); true -> I end || I <- Priv],
    Common = [{<<"digest">>, <<"sha256">>}, {<<"data">>, <<"m">>}, {<<"parts">>, Parts},
              {<<"salt_bytes">>, 32}],
    {ok, Signed} = bench(<<"rsa_sign_pss">>, Common),
    ?assertEqual(<<"crypto:sign/5">>, proplists:get_value(api, Signed)),
    Sig = proplists:get_value(output, Signed),
    {ok, Verified} = bench(<<"rsa_verify_pss">>, [{<<"sig_pss">>, Sig} | Common]),
    ?assertEqual(<<1>>, proplists:get_value(output, Verified)),
    ?assertMatch({error, {bad_request, <<"argument parts must be 8 binaries">>}},
                 bench(<<"rsa_sign_pkcs1">>, [{<<"parts">>, tl(Parts)} | tl(tl(Common))] ++
                                              [{<<"digest">>, <<"sha256">>},
                                               {<<"data">>, <<"m">>}])).

unknown_curve_names_its_table_test() ->
    ?assertEqual({error, {bad_request, <<"unknown EdDSA curve: ed448">>}},
                 bench(<<"eddsa_sign">>, [{<<"curve">>, <<"ed448">>}, {<<"data">>, <<"m">>},
                                          {<<"key">>, <<0:256>>}])).
