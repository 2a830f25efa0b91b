%% bridge_alt: the alternatives people weigh against a crypto call, timed
%% beside it as opt-in calls (bridge list shows them; `bridge run --with`
%% or a scenario file's [calls] adds them).
%%
%% - rand:bytes/1 against crypto:strong_rand_bytes/1 (erlef/otp_builds#41);
%% - PBKDF2 written in Erlang over crypto's MAC functions, one HMAC per
%%   iteration, as the hex packages that predate crypto:pbkdf2_hmac/5 do:
%%   the baseline NIF libraries are judged by. One loop per API, written out
%%   (crypto:mac/4, and crypto:mac_init/3 + mac_update/2 + mac_final/1);
%% - streaming crypto:hash_init/1 + hash_update/2 + hash_final/1 against
%%   one-shot crypto:hash/2;
%% - public_key:sign/3 and verify/4 against crypto:sign/4 and verify/5:
%%   JOSE libraries sign and verify JWTs through public_key.
%%
%% Each constructor returns {Once, Loop} as bridge_loops' do. Functions some
%% supported release lacks (rand:bytes/1 came in OTP 24.1; public_key is an
%% application of its own, which a minimal install may lack) are called
%% through a module held in a variable, so that dialyzer on an older OTP, or
%% with a PLT without public_key, does not flag them; bridge_ops asks first
%% whether the release has them.
-module(bridge_alt).

-export([rand_bytes/1, pbkdf2/6, hash_stream/2, pk_sign/4, pk_verify/5]).
-export([has_rand_bytes/0, has_public_key/0]).
-export_type([pbkdf2_api/0]).

-type pbkdf2_api() :: pbkdf2_mac | pbkdf2_mac_stream.

%% ---------------------------------------------------------------------------
%% Random bytes from the rand module's default generator (exsss, seeded per
%% process): fast and not cryptographically strong. Two calls per probe, as
%% for strong_rand_bytes: the driver checks the lengths and that they differ.

-spec has_rand_bytes() -> boolean().
has_rand_bytes() ->
    _ = code:ensure_loaded(rand),
    erlang:function_exported(rand, bytes, 1).

-spec rand_bytes(pos_integer()) -> bridge_loops:timed_call().
rand_bytes(N) ->
    M = rand_mod(),
    {fun() -> <<(M:bytes(N))/binary, (M:bytes(N))/binary>> end, fun(K) -> rand_loop(K, M, N) end}.

rand_loop(0, _, _) -> ok;
rand_loop(K, M, N) -> _ = M:bytes(N), rand_loop(K - 1, M, N).

rand_mod() -> rand.

%% ---------------------------------------------------------------------------
%% PBKDF2-HMAC (RFC 8018, section 5.2) with one MAC call per iteration.
%% The key is set up on every iteration: crypto can neither reuse a keyed
%% state after its final nor copy one, which is the cost pbkdf2_hmac/5 (one
%% keyed context inside OpenSSL) does not pay.

-spec pbkdf2(pbkdf2_api(), bridge_api:digest(), binary(), binary(), pos_integer(),
             pos_integer()) -> bridge_loops:timed_call().
pbkdf2(Api, Dg, Pass, Salt, Iter, Len) ->
    {fun() -> derive(Api, Dg, Pass, Salt, Iter, Len) end,
     fun(N) -> pbkdf2_loop(N, Api, Dg, Pass, Salt, Iter, Len) end}.

pbkdf2_loop(0, _, _, _, _, _, _) -> ok;
pbkdf2_loop(N, Api, Dg, Pass, Salt, Iter, Len) ->
    _ = derive(Api, Dg, Pass, Salt, Iter, Len),
    pbkdf2_loop(N - 1, Api, Dg, Pass, Salt, Iter, Len).

derive(Api, Dg, Pass, Salt, Iter, Len) ->
    #{size := HLen} = crypto:hash_info(Dg),
    Blocks = (Len + HLen - 1) div HLen,
    Out = << <<(block(Api, Dg, Pass, Salt, Iter, I))/binary>> || I <- lists:seq(1, Blocks) >>,
    binary:part(Out, 0, Len).

block(pbkdf2_mac, Dg, Pass, Salt, Iter, I) ->
    U = crypto:mac(hmac, Dg, Pass, <<Salt/binary, I:32>>),
    iter_mac(Iter - 1, Dg, Pass, U, U);
block(pbkdf2_mac_stream, Dg, Pass, Salt, Iter, I) ->
    U = stream_mac(Dg, Pass, <<Salt/binary, I:32>>),
    iter_stream(Iter - 1, Dg, Pass, U, U).

iter_mac(0, _, _, _, Acc) -> Acc;
iter_mac(K, Dg, Pass, U0, Acc) ->
    U = crypto:mac(hmac, Dg, Pass, U0),
    iter_mac(K - 1, Dg, Pass, U, crypto:exor(U, Acc)).

iter_stream(0, _, _, _, Acc) -> Acc;
iter_stream(K, Dg, Pass, U0, Acc) ->
    U = stream_mac(Dg, Pass, U0),
    iter_stream(K - 1, Dg, Pass, U, crypto:exor(U, Acc)).

stream_mac(Dg, Pass, Data) ->
    S = crypto:mac_init(hmac, Dg, Pass),
    _ = crypto:mac_update(S, Data),
    crypto:mac_final(S).

%% ---------------------------------------------------------------------------
%% A digest through the streaming API, one context per message.

-spec hash_stream(bridge_api:digest(), binary()) -> bridge_loops:timed_call().
hash_stream(Dg, D) ->
    {fun() -> stream_hash(Dg, D) end, fun(N) -> hash_loop(N, Dg, D) end}.

stream_hash(Dg, D) ->
    crypto:hash_final(crypto:hash_update(crypto:hash_init(Dg), D)).

hash_loop(0, _, _) -> ok;
hash_loop(N, Dg, D) -> _ = stream_hash(Dg, D), hash_loop(N - 1, Dg, D).

%% ---------------------------------------------------------------------------
%% ECDSA through public_key, with the key records made once (as a JOSE
%% library holds a decoded key). The private key's record is the one this
%% release's public_key:generate_key/1 returns, with the scenario's key put
%% in: the record's size differs between releases, its first fields do not
%% (#'ECPrivateKey'{version, privateKey, parameters, publicKey, ...}).

-spec has_public_key() -> boolean().
has_public_key() ->
    case code:ensure_loaded(pk_mod()) of
        {module, _} -> true;
        {error, _} -> false
    end.

-spec pk_sign(bridge_api:digest(), bridge_api:curve(), binary(), {binary(), binary()}) ->
          bridge_loops:timed_call().
pk_sign(Dg, Curve, Msg, {Priv, Pub}) ->
    M = pk_mod(),
    Fresh = M:generate_key({namedCurve, Curve}),
    Key = setelement(5, setelement(3, Fresh, Priv), Pub),
    {fun() -> M:sign(Msg, Dg, Key) end, fun(N) -> sign_loop(N, M, Dg, Msg, Key) end}.

sign_loop(0, _, _, _, _) -> ok;
sign_loop(N, M, Dg, Msg, Key) -> _ = M:sign(Msg, Dg, Key), sign_loop(N - 1, M, Dg, Msg, Key).

-spec pk_verify(bridge_api:digest(), bridge_api:curve(), binary(), binary(), binary()) ->
          bridge_loops:timed_call().
pk_verify(Dg, Curve, Msg, Sig, Pub) ->
    M = pk_mod(),
    Params = element(4, M:generate_key({namedCurve, Curve})),
    Key = {{'ECPoint', Pub}, Params},
    {fun() -> bool_bin(M:verify(Msg, Dg, Sig, Key)) end,
     fun(N) -> verify_loop(N, M, Dg, Msg, Sig, Key) end}.

verify_loop(0, _, _, _, _, _) -> ok;
verify_loop(N, M, Dg, Msg, Sig, Key) ->
    _ = M:verify(Msg, Dg, Sig, Key),
    verify_loop(N - 1, M, Dg, Msg, Sig, Key).

bool_bin(true) -> <<1>>;
bool_bin(false) -> <<0>>.

pk_mod() -> public_key.
