%% bridge_info: the provenance of this node (OTP and ERTS versions, emulator,
%% clock, the crypto application and the libcrypto behind it, the API chosen
%% for each call), for the report's header.
%%
%% Every fact travels as an atom, integer or binary: the driver's codec
%% decodes neither maps nor charlists as text. Each fact that an older
%% release lacks degrades to a default instead of failing the info request.
-module(bridge_info).

-export([greeting/0, info/0, crypto_available/0, crypto_info/1]).
-export_type([greeting/0, info/0]).

-type greeting() :: [{kind, erlang} | {otp_release, binary()} | {crypto, boolean()}
                     | {crypto_error, binary()}].
%% A proplist: see info/0 for the keys.
-type info() :: [{atom(), term()}, ...].

%% What the worker says in its {ready, ...} frame, before any request.
-spec greeting() -> greeting().
greeting() ->
    {Available, Reason} = crypto_available(),
    [{kind, erlang},
     {otp_release, bin(erlang:system_info(otp_release))},
     {crypto, Available},
     {crypto_error, Reason}].

-spec info() -> info().
info() ->
    {Available, Reason} = crypto_available(),
    [{otp_release, bin(erlang:system_info(otp_release))},
     {otp_version, otp_version()},
     {erts_version, bin(erlang:system_info(version))},
     {emu_flavor, emu_flavor()},
     {emu_type, catch_atom(fun() -> erlang:system_info(emu_type) end)},
     {os_pid, bin(os:getpid())},
     {schedulers_online, erlang:system_info(schedulers_online)},
     {clock_resolution_hz, clock_resolution()},
     {crypto, Available},
     {crypto_error, Reason}]
    ++ case Available of
           true -> crypto_details();
           false -> []
       end.

crypto_details() ->
    _ = application:load(crypto),
    Vsn = case application:get_key(crypto, vsn) of
              {ok, V} -> bin(V);
              _ -> <<"unknown">>
          end,
    Exported = fun erlang:function_exported/3,
    [{crypto_vsn, Vsn},
     {info_lib, [{Name, Num, Text} || {Name, Num, Text} <- crypto:info_lib()]},
     {crypto_info, crypto_info(Exported)},
     {apis, [{mac, bridge_api:api_name(bridge_api:mac_api(Exported, 10))},
             {mac_full, bridge_api:api_name(bridge_api:mac_api(Exported, 0))},
             {hash, bridge_api:api_name(bridge_api:hash_api(Exported))}]}].

%% crypto:info/0 (OTP 24.2+) returns a map; the port codec on the Python side
%% cannot decode maps, so it travels as a proplist of binaries. Before 24.2
%% only info_lib/0 exists, and this is []. Exported as in bridge_api.
-spec crypto_info(bridge_api:exported()) -> [{atom(), atom() | binary() | integer()}].
crypto_info(Exported) ->
    case Exported(crypto, info, 0) of
        true ->
            case catch crypto:info() of
                M when is_map(M) -> [{K, value_bin(V)} || {K, V} <- maps:to_list(M)];
                _ -> []
            end;
        false ->
            []
    end.

%% crypto can be missing (erlang-base without erlang-crypto) or fail to load
%% its NIF (no libcrypto). Say which, so the driver can tell the user.
-spec crypto_available() -> {boolean(), binary()}.
crypto_available() ->
    case code:ensure_loaded(crypto) of
        {module, crypto} ->
            case catch crypto:info_lib() of
                L when is_list(L) -> {true, <<>>};
                Other -> {false, bin(io_lib:format("crypto loaded but unusable: ~0p", [Other]))}
            end;
        {error, nofile} ->
            {false, <<"the crypto application is not installed">>};
        {error, Why} ->
            {false, load_failure(Why)}
    end.

%% code:ensure_loaded/1 says only on_load_failure when crypto's NIF library
%% does not load. Opening the same library with erl_ddll gets the dynamic
%% loader's own reason ("libcrypto.so.1.1: cannot open shared object
%% file"), as bridge's `otp list` probe does, so a skip says what is missing.
load_failure(Why) ->
    Generic = bin(io_lib:format("the crypto module failed to load: ~0p", [Why])),
    case code:lib_dir(crypto) of
        Dir when is_list(Dir) ->
            case erl_ddll:load(filename:join([Dir, "priv", "lib"]), "crypto") of
                {error, {open_error, _} = E} ->
                    bin(["crypto's NIF library cannot be loaded: ", erl_ddll:format_error(E)]);
                ok ->
                    _ = erl_ddll:unload("crypto"),
                    Generic;
                _ ->
                    Generic
            end;
        _ ->
            Generic
    end.

%% The full version (25.2.3) is in a file; otp_release gives only the major.
otp_version() ->
    Rel = erlang:system_info(otp_release),
    File = filename:join([code:root_dir(), "releases", Rel, "OTP_VERSION"]),
    case file:read_file(File) of
        {ok, Text} -> bin(string:trim(binary_to_list(Text)));
        _ -> bin(Rel)
    end.

%% emu_flavor (jit | emu) exists from OTP 24; older releases are all "emu".
emu_flavor() ->
    case catch erlang:system_info(emu_flavor) of
        A when is_atom(A) -> A;
        _ -> emu
    end.

%% In Hz; 0 when the release does not say.
clock_resolution() ->
    case catch erlang:system_info(os_monotonic_time_source) of
        L when is_list(L) -> proplists:get_value(resolution, L, 0);
        _ -> 0
    end.

bin(B) when is_binary(B) -> B;
bin(L) -> unicode:characters_to_binary(L).

value_bin(V) when is_atom(V); is_binary(V); is_integer(V) -> V;
value_bin(V) when is_list(V) -> bin(V);
value_bin(V) -> bin(io_lib:format("~0p", [V])).

catch_atom(F) ->
    case catch F() of
        A when is_atom(A) -> A;
        _ -> unknown
    end.
