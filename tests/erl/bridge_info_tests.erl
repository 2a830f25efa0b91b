%% EUnit tests for bridge_info: the provenance of the node, in terms the
%% driver's codec can read (no maps, no charlists).
-module(bridge_info_tests).

-include_lib("eunit/include/eunit.hrl").

exported(List) ->
    fun(M, F, A) -> lists:member({M, F, A}, List) end.

%% crypto:info/0 exists from OTP 24.2; before that only info_lib/0 answers.
crypto_info_new_test() ->
    Info = bridge_info:crypto_info(exported([{crypto, info, 0}])),
    ?assertMatch({_, _}, lists:keyfind(otp_crypto_version, 1, Info)),
    ?assert(lists:all(fun({_, V}) -> not is_list(V) end, Info)).  % no charlists on the wire

crypto_info_old_test() ->
    ?assertEqual([], bridge_info:crypto_info(exported([]))).

crypto_available_test() ->
    ?assertEqual({true, <<>>}, bridge_info:crypto_available()).

greeting_test() ->
    ?assertMatch([{kind, erlang}, {otp_release, _}, {crypto, true}, {crypto_error, <<>>}],
                 bridge_info:greeting()).

%% The keys the driver reads, in the order they have always been sent, and
%% no charlists on the wire.
info_keys_test() ->
    Info = bridge_info:info(),
    ?assertEqual([otp_release, otp_version, erts_version, emu_flavor, emu_type, os_pid,
                  schedulers_online, clock_resolution_hz, crypto, crypto_error, crypto_vsn,
                  info_lib, crypto_info, apis],
                 [K || {K, _} <- Info]),
    ?assertEqual(list_to_binary(os:getpid()), proplists:get_value(os_pid, Info)),
    ?assertEqual([mac, mac_full, hash], [K || {K, _} <- proplists:get_value(apis, Info)]),
    ?assertEqual([], [K || {K, V} <- Info, V =/= [], io_lib:printable_list(V)]).
