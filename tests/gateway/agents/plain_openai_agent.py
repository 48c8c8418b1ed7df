"""An agent that knows nothing of tracerl: the plain openai client, configured from the
environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``) the way any harness is. It answers the task
given as JSON in argv[1] in two model calls (answer, then a check) and prints its final answer
and which tracing modules it loaded (none, is the point)."""

import json
import sys

import openai

task = json.loads(sys.argv[1])
client = openai.OpenAI(max_retries=0)
messages = [{"role": "user", "content": task["question"]}]
first = client.chat.completions.create(model="policy", messages=messages).choices[0].message.content
messages += [{"role": "assistant", "content": first}, {"role": "user", "content": "Sure?"}]
final = client.chat.completions.create(model="policy", messages=messages).choices[0].message.content
loaded = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in ("tracerl", "opentelemetry")})
print(json.dumps({"answer": final, "tracing_modules": loaded}))
