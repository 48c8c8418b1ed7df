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
# Set by the trainer on the root spans it opens for the rollouts it launches (trainer/tracing.py):
# which runner ran the agent, how the attempt ended (ok | failed | timeout), the process exit code.
ROLLOUT_RUNNER = "tracerl.rollout.runner"
ROLLOUT_STATUS = "tracerl.rollout.status"
ROLLOUT_EXIT_CODE = "tracerl.rollout.exit_code"
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
# who supplied a reward after the rollout ended (`tracerl reward`); absent for in-rollout rewards
REWARD_SOURCE = "tracerl.reward.source"
REWARD_SOURCE_OFFLINE = "offline"

# --- wire-format version ----------------------------------------------------------------------
# Optional, on the rollout root span or the resource. The transition builder skips a rollout that
# declares a version it does not read (reason `schema_version_mismatch`); absent means current.
SCHEMA_VERSION_ATTR = "tracerl.schema.version"
SCHEMA_VERSION = "1"

# --- semantic variables -----------------------------------------------------------------------
EVENT_VARIABLE = "tracerl.variable"
VARIABLE_NAME = "tracerl.variable.name"
VARIABLE_VALUE = "tracerl.variable.value"

# --- other conventions the transition builder reads -------------------------------------------
# The older flattened GenAI form (OpenLLMetry): gen_ai.prompt.<i>.role / .content,
# gen_ai.completion.<i>.role / .content / .finish_reason / .tool_calls.<j>.name / .arguments.
GEN_AI_PROMPT_PREFIX = "gen_ai.prompt."
GEN_AI_COMPLETION_PREFIX = "gen_ai.completion."
GEN_AI_USAGE_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens"
GEN_AI_USAGE_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens"
LLM_REQUEST_TYPE = "llm.request.type"
# OpenInference: llm.input_messages.<i>.message.role / .content / .contents.<j>.message_content.text
# / .tool_calls.<j>.tool_call.function.name / .arguments / .tool_call_id; llm.output_messages.<i>...
OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
OPENINFERENCE_KIND_LLM = "LLM"
OPENINFERENCE_KIND_AGENT = "AGENT"
OPENINFERENCE_KIND_TOOL = "TOOL"
OPENINFERENCE_INPUT_MESSAGES = "llm.input_messages."
OPENINFERENCE_OUTPUT_MESSAGES = "llm.output_messages."
OPENINFERENCE_MODEL_NAME = "llm.model_name"
OPENINFERENCE_PROMPT_TOKENS = "llm.token_count.prompt"
OPENINFERENCE_COMPLETION_TOKENS = "llm.token_count.completion"
OPENINFERENCE_AGENT_NAME = "agent.name"

# --- double recording: one model call, one transition ------------------------------------------
# A framework instrumentation (LangChain, OpenAI Agents SDK, openinference...) may record an LLM
# span for the same model call as the OpenAI-client instrumentation. The rule, which recorders
# follow and the transition builder applies:
#   1. The client span is a descendant of the framework span of the same call (the client runs
#      inside the framework's call), and/or both carry the same gen_ai.response.id.
#   2. An LLM span with an LLM-span descendant is a wrapper of that call, never a call of its own.
#      Among LLM spans sharing one gen_ai.response.id, the one with token ids
#      (tracerl.llm.response_token_ids) wins, else the deepest in the tree.
#   3. The kept span is the one nearest the wire (it has the token ids and exact request); a
#      wrapper only lends what the kept span lacks (messages, model). Agent attribution comes from
#      the nearest invoke_agent ancestor, which the two spans share.
DOUBLE_RECORDING_RULE = "descendant-or-same-response-id; keep the client span"

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
# The gateway (gateway/) records LLM spans in exactly the OpenAI-client instrumentation's shape,
# under its own scope, and opens rollout root spans for the rollouts the trainer registers there.
SCOPE_GATEWAY = "tracerl.gateway"
# Request header naming the rollout of a call through the gateway (the other ways: the path prefix
# /rollout/<key>/v1/... and the W3C `traceparent` header).
HEADER_ROLLOUT = "x-tracerl-rollout"

# --- framework plugins (instrumentations/langchain, autogen, openai_agents) -------------------
# Each plugin makes agent spans (invoke_agent + gen_ai.agent.name) and execute_tool spans; where
# it also records the model call (LangChain, OpenAI Agents SDK), it follows the double-recording
# rule above: its span is current during the call, so the OpenAI-client span is its child, and
# both carry the same gen_ai.response.id.
SCOPE_LANGCHAIN = "tracerl.instrumentations.langchain"
SCOPE_AUTOGEN = "tracerl.instrumentations.autogen"
SCOPE_OPENAI_AGENTS = "tracerl.instrumentations.openai_agents"
# LangChain runnable metadata that makes a run an agent span: True (the run's name) or the name.
LANGCHAIN_AGENT_METADATA = "tracerl.agent"
# tracerl.variable names the plugins record on each agent span: what it got and what it gave.
VAR_AGENT_INPUT = "agent.input"
VAR_AGENT_OUTPUT = "agent.output"
# OpenAI Agents SDK handoff span (GenAI names no handoff yet).
SPAN_HANDOFF = "handoff"
HANDOFF_FROM_AGENT = "tracerl.handoff.from_agent"
HANDOFF_TO_AGENT = "tracerl.handoff.to_agent"
# The SDK's own exporters (to OpenAI's trace backend) stay on only when this is 1.
ENV_OPENAI_AGENTS_KEEP_PROCESSORS = "TRACERL_OPENAI_AGENTS_KEEP_PROCESSORS"


def reward_component(name: str) -> str:
    """Attribute key of one named reward component."""
    return REWARD_COMPONENT_PREFIX + name
