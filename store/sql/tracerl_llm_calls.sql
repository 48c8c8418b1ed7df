-- One row per LLM-call span, whichever convention recorded it: OpenTelemetry GenAI
-- (gen_ai.input/output.messages), the older flattened gen_ai.prompt.N / gen_ai.completion.N, or
-- OpenInference (llm.input_messages.N.message.*). `call_key` is the response id when there is
-- one, so a framework span and the client span of the same call share it (tracerl.semconv,
-- "double recording").
CREATE VIEW IF NOT EXISTS `${database}`.`tracerl_llm_calls` AS
SELECT
    TraceId AS trace_id,
    SpanId AS span_id,
    ParentSpanId AS parent_span_id,
    Timestamp AS start_time,
    Duration / 1e6 AS duration_ms,
    ServiceName AS service,
    SpanName AS span_name,
    multiIf(SpanAttributes['openinference.span.kind'] = 'LLM', 'openinference',
            mapContains(SpanAttributes, 'gen_ai.prompt.0.content') OR mapContains(SpanAttributes, 'gen_ai.completion.0.content'), 'genai_flattened',
            'genai') AS convention,
    coalesce(nullIf(SpanAttributes['gen_ai.request.model'], ''), nullIf(SpanAttributes['llm.model_name'], ''), SpanAttributes['gen_ai.response.model']) AS model,
    SpanAttributes['gen_ai.response.id'] AS response_id,
    if(SpanAttributes['gen_ai.response.id'] != '', SpanAttributes['gen_ai.response.id'], SpanId) AS call_key,
    toUInt64OrZero(coalesce(nullIf(SpanAttributes['gen_ai.usage.input_tokens'], ''), nullIf(SpanAttributes['gen_ai.usage.prompt_tokens'], ''), SpanAttributes['llm.token_count.prompt'])) AS input_tokens,
    toUInt64OrZero(coalesce(nullIf(SpanAttributes['gen_ai.usage.output_tokens'], ''), nullIf(SpanAttributes['gen_ai.usage.completion_tokens'], ''), SpanAttributes['llm.token_count.completion'])) AS output_tokens,
    length(JSONExtractArrayRaw(SpanAttributes['tracerl.llm.prompt_token_ids'])) AS prompt_token_count,
    length(JSONExtractArrayRaw(SpanAttributes['tracerl.llm.response_token_ids'])) AS response_token_count,
    mapContains(SpanAttributes, 'tracerl.llm.response_token_ids') AS has_token_ids,
    multiIf(mapContains(SpanAttributes, 'gen_ai.output.messages'),
                arrayStringConcat(arrayMap(p -> JSONExtractString(p, 'content'),
                    arrayFilter(p -> JSONExtractString(p, 'type') = 'text',
                        JSONExtractArrayRaw(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1), 'parts'))), ''),
            mapContains(SpanAttributes, 'gen_ai.completion.0.content'), SpanAttributes['gen_ai.completion.0.content'],
            SpanAttributes['llm.output_messages.0.message.content']) AS response_text,
    coalesce(nullIf(JSONExtractString(SpanAttributes['gen_ai.response.finish_reasons'], 1), ''),
             SpanAttributes['gen_ai.completion.0.finish_reason']) AS finish_reason,
    StatusCode AS status_code,
    StatusMessage AS error
FROM `${database}`.`${table}`
WHERE SpanAttributes['gen_ai.operation.name'] IN ('chat', 'text_completion', 'generate_content')
   OR SpanAttributes['openinference.span.kind'] = 'LLM'
   OR SpanAttributes['llm.request.type'] IN ('chat', 'completion')
