"""Every span name, attribute key and event name tracerl writes or reads, in one place.

OpenTelemetry GenAI names (``gen_ai.*``) are used wherever the GenAI semantic conventions have
one; ``tracerl.*`` names cover only what training needs and GenAI does not name
(../shared/DESIGN.md, "Conventions on the wire"). The transition builder reads spans back with
these same constants, so a rename here is a wire-format change.
"""

# --- span names -------------------------------------------------------------------------------
SPAN_ROLLOUT = "tracerl.rollout"
SPAN_REWARD = "tracerl.reward"

# --- rollout (root span attributes, or resource attributes when one process = one rollout) ----
ROLLOUT_PREFIX = "tracerl.rollout."
ROLLOUT_TASK_ID = "tracerl.rollout.task_id"
ROLLOUT_GROUP_ID = "tracerl.rollout.group_id"
ROLLOUT_ATTEMPT = "tracerl.rollout.attempt"
ROLLOUT_MODE = "tracerl.rollout.mode"
ROLLOUT_TASK = "tracerl.rollout.task"
POLICY_VERSION = "tracerl.policy.version"
ROLLOUT_MODES = ("train", "val", "test")

# --- GenAI (OpenTelemetry semantic conventions) ----------------------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature"
GEN_AI_REQUEST_TOP_P = "gen_ai.request.top_p"
GEN_AI_REQUEST_TOP_K = "gen_ai.request.top_k"
GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty"
GEN_AI_REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty"
GEN_AI_REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
GEN_AI_REQUEST_SEED = "gen_ai.request.seed"
GEN_AI_REQUEST_CHOICE_COUNT = "gen_ai.request.choice.count"
GEN_AI_REQUEST_STREAM = "gen_ai.request.stream"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

# values of gen_ai.operation.name
OP_CHAT = "chat"
OP_TEXT_COMPLETION = "text_completion"
OP_GENERATE_CONTENT = "generate_content"
OP_INVOKE_AGENT = "invoke_agent"
OP_EXECUTE_TOOL = "execute_tool"
PROVIDER_OPENAI = "openai"

# --- tracerl additions to the LLM span --------------------------------------------------------
LLM_PROMPT_TOKEN_IDS = "tracerl.llm.prompt_token_ids"
LLM_RESPONSE_TOKEN_IDS = "tracerl.llm.response_token_ids"
LLM_RESPONSE_LOGPROBS = "tracerl.llm.response_logprobs"

# --- reward -----------------------------------------------------------------------------------
REWARD_VALUE = "tracerl.reward.value"
REWARD_NAME = "tracerl.reward.name"
REWARD_COMPONENT_PREFIX = "tracerl.reward.component."
REWARD_PRIMARY = "reward"

# --- semantic variables -----------------------------------------------------------------------
EVENT_VARIABLE = "tracerl.variable"
VARIABLE_NAME = "tracerl.variable.name"
VARIABLE_VALUE = "tracerl.variable.value"

# --- environment variables of tracerl (the OTEL_* ones keep their standard meaning) -----------
ENV_CAPTURE_TOKENS = "TRACERL_CAPTURE_TOKENS"
ENV_REDACT = "TRACERL_REDACT"
ENV_CAPTURE_CONTENT = "TRACERL_CAPTURE_CONTENT"
ENV_EXPORT_TIMEOUT = "TRACERL_EXPORT_TIMEOUT"
ENV_TRACEPARENT = "TRACEPARENT"
ENV_TRACESTATE = "TRACESTATE"

# --- instrumentation scope names --------------------------------------------------------------
SCOPE_SDK = "tracerl"
SCOPE_OPENAI = "tracerl.instrumentations.openai"


def reward_component(name: str) -> str:
    """Attribute key of one named reward component."""
    return REWARD_COMPONENT_PREFIX + name
