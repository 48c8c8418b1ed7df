-- One row per rollout (trace): identity from the `tracerl.rollout` root span, or from the
-- resource when one process is one rollout; the final reward (the latest reward span named
-- 'reward') and its components; LLM calls (a call recorded twice, by a framework and by the
-- client, counts once), tool calls, tokens, duration, errors, agents, and the last answer.
CREATE VIEW IF NOT EXISTS `${database}`.`tracerl_rollouts` AS
SELECT
    s.trace_id AS trace_id,
    s.task_id AS task_id,
    if(s.group_id != '', s.group_id, s.task_id) AS group_id,
    toInt64OrZero(s.attempt) AS attempt,
    s.mode AS mode,
    s.policy_version AS policy_version,
    s.finished AS finished,
    s.start_time AS start_time,
    s.duration_ms AS duration_ms,
    s.final_reward AS final_reward,
    s.reward_components AS reward_components,
    s.reward_spans AS reward_spans,
    c.llm_calls AS llm_calls,
    s.tool_calls AS tool_calls,
    c.input_tokens AS input_tokens,
    c.output_tokens AS output_tokens,
    c.last_response AS last_response,
    s.errors AS errors,
    s.agents AS agents,
    s.services AS services
FROM (
    WITH SpanName = 'tracerl.reward' AND SpanAttributes['tracerl.reward.name'] = 'reward' AS is_primary_reward
    SELECT
        TraceId AS trace_id,
        countIf(SpanName = 'tracerl.rollout') > 0 AS has_root,
        if(has_root, anyIf(SpanAttributes['tracerl.rollout.task_id'], SpanName = 'tracerl.rollout'),
           anyIf(ResourceAttributes['tracerl.rollout.task_id'], ResourceAttributes['tracerl.rollout.task_id'] != '')) AS task_id,
        if(has_root, anyIf(SpanAttributes['tracerl.rollout.group_id'], SpanName = 'tracerl.rollout'),
           anyIf(ResourceAttributes['tracerl.rollout.group_id'], ResourceAttributes['tracerl.rollout.group_id'] != '')) AS group_id,
        if(has_root, anyIf(SpanAttributes['tracerl.rollout.attempt'], SpanName = 'tracerl.rollout'),
           anyIf(ResourceAttributes['tracerl.rollout.attempt'], ResourceAttributes['tracerl.rollout.attempt'] != '')) AS attempt,
        if(has_root, anyIf(SpanAttributes['tracerl.rollout.mode'], SpanName = 'tracerl.rollout'),
           anyIf(ResourceAttributes['tracerl.rollout.mode'], ResourceAttributes['tracerl.rollout.mode'] != '')) AS mode,
        coalesce(nullIf(anyIf(SpanAttributes['tracerl.policy.version'], SpanAttributes['tracerl.policy.version'] != ''), ''),
                 anyIf(ResourceAttributes['tracerl.policy.version'], ResourceAttributes['tracerl.policy.version'] != '')) AS policy_version,
        has_root OR countIf(ResourceAttributes['tracerl.rollout.task_id'] != '') > 0 OR countIf(ParentSpanId = '') > 0 AS finished,
        min(Timestamp) AS start_time,
        (max(toUnixTimestamp64Nano(Timestamp) + Duration) - min(toUnixTimestamp64Nano(Timestamp))) / 1e6 AS duration_ms,
        if(countIf(is_primary_reward) > 0,
           argMaxIf(toFloat64OrNull(SpanAttributes['tracerl.reward.value']), Timestamp, is_primary_reward),
           NULL) AS final_reward,
        argMaxIf(CAST(mapApply((k, v) -> (substring(k, 26), toFloat64OrZero(v)),
                               mapFilter((k, v) -> startsWith(k, 'tracerl.reward.component.'), SpanAttributes))
                      AS Map(String, Float64)), Timestamp, is_primary_reward) AS reward_components,
        countIf(SpanName = 'tracerl.reward') AS reward_spans,
        countIf(SpanAttributes['gen_ai.operation.name'] = 'execute_tool' OR SpanAttributes['openinference.span.kind'] = 'TOOL') AS tool_calls,
        countIf(StatusCode = 'Error') AS errors,
        arraySort(groupUniqArrayIf(
            if(SpanAttributes['gen_ai.agent.name'] != '', SpanAttributes['gen_ai.agent.name'], SpanAttributes['agent.name']),
            SpanAttributes['gen_ai.operation.name'] = 'invoke_agent' OR SpanAttributes['openinference.span.kind'] = 'AGENT')) AS agents,
        arraySort(groupUniqArray(ServiceName)) AS services
    FROM `${database}`.`${table}`
    GROUP BY TraceId
    HAVING has_root OR reward_spans > 0 OR task_id != ''
        OR countIf(SpanAttributes['gen_ai.operation.name'] IN ('chat', 'text_completion', 'generate_content')
                   OR SpanAttributes['openinference.span.kind'] = 'LLM'
                   OR SpanAttributes['llm.request.type'] IN ('chat', 'completion')) > 0
) AS s
LEFT JOIN (
    SELECT
        trace_id,
        count() AS llm_calls,
        sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens,
        argMax(response_text, start_time) AS last_response
    FROM (
        SELECT trace_id, call_key, max(input_tokens) AS input_tokens,
               max(greatest(output_tokens, response_token_count)) AS output_tokens,
               argMax(response_text, length(response_text)) AS response_text, min(start_time) AS start_time
        FROM `${database}`.`tracerl_llm_calls`
        GROUP BY trace_id, call_key
    )
    GROUP BY trace_id
) AS c ON s.trace_id = c.trace_id
