"""`tracerl train CONFIG.yaml`: the YAML file as validated dataclasses.

Every key has a type and a default here; an unknown key, a value of the wrong type or out of its
range is a `ConfigError` that names the key (``runner.concurency: unknown key (did you mean
'concurrency'?)``). Relative paths are relative to the config file. The keys are the same for
every backend, so a config moves between the local backend and verl unchanged.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path


class ConfigError(ValueError):
    """A bad config: the message starts with the dotted key."""


@dataclass
class OptimizerConfig:
    lr: float = 1.0e-5
    weight_decay: float = 0.0
    betas: list = field(default_factory=lambda: [0.9, 0.999])
    max_grad_norm: float = 1.0  # 0 = no clipping


@dataclass
class AlgorithmConfig:
    advantage: str = "grpo"  # grpo | grpo_no_std | rloo | reinforce_pp_baseline
    credit: str = "identical"  # identical | discounted | stepwise (the transition builder's)
    gamma: float = 1.0  # for discounted credit
    loss: str = "ppo_clip"  # ppo_clip | reinforce
    clip_ratio: float = 0.2
    clip_ratio_high: float | None = None  # default: clip_ratio
    dual_clip: float | None = 3.0  # None turns dual clip off
    kl_coef: float = 0.0  # > 0 loads a frozen reference model (the starting weights)
    entropy_coef: float = 0.0
    loss_weighting: str = "rollout"  # rollout (each rollout weighs the same) | token
    old_logprobs: str = "rollout"  # rollout (the serving engine's) | recompute
    eps: float = 1.0e-6


@dataclass
class KubernetesConfig:
    namespace: str = "default"
    image: str = ""
    template: str | None = None  # a Job manifest (YAML) with ${...} placeholders; default: a built-in one
    service_account: str | None = None
    poll_s: float = 2.0
    delete_finished: bool = True


@dataclass
class RunnerConfig:
    kind: str = "command"  # command | python | kubernetes
    command: str | None = None  # command: a shell command; {task_id}, {attempt}... are filled in
    function: str | None = None  # python: "module:function" or "path/to/file.py:function"
    concurrency: int = 4
    timeout_s: float = 120.0
    retries: int = 0  # failed attempts are retried as new attempts (new rollouts)
    env: dict = field(default_factory=dict)  # extra environment for the agent
    workdir: str | None = None
    kubernetes: KubernetesConfig = field(default_factory=KubernetesConfig)


@dataclass
class PolicyServerConfig:
    host: str = "127.0.0.1"
    port: int = 0  # 0 = any free port
    url: str | None = None  # an external server (`tracerl serve-policy`): reloaded from checkpoints
    # The base URL the agents get, if not the server's: a gateway, e.g.
    # http://127.0.0.1:8090/rollout/{traceparent}/v1 ({traceparent} is filled per rollout).
    agent_url: str | None = None
    max_batch: int = 32
    batch_wait_ms: float = 5.0
    gateway: str | None = None  # a tracerl gateway to pause around weight reloads
    admin_token: str = ""


@dataclass
class TracesConfig:
    quiet_s: float = 0.5  # no new span for this long after the root span arrived = complete
    timeout_s: float = 60.0  # then the rollout is marked failed
    poll_s: float = 0.2


@dataclass
class EvalConfig:
    tasks: str | None = None  # held-out tasks (jsonl); rollouts in mode "val", never trained on
    every: int = 0  # evaluate before step 1 and every N steps and at the end; 0 = only with tasks, at the start and end
    group_size: int = 1
    limit: int | None = None


@dataclass
class TrainConfig:
    model: str
    tasks: str
    group_size: int = 4
    tasks_per_step: int = 2
    steps: int = 10
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    algorithm: AlgorithmConfig = field(default_factory=AlgorithmConfig)
    agents: str = ".*"
    aggregate: str = "transition"  # transition | trajectory
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    store: str | None = None
    output_dir: str = "runs/tracerl"
    backend: str = "local"  # local | verl
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    dtype: str = "auto"  # auto (bf16 where supported, else fp32) | float32 | bfloat16
    micro_batch_tokens: int = 4096  # token budget of one forward/backward (padding included)
    checkpoint_every: int = 0  # also at the end
    resume: bool = False  # continue from the latest checkpoint in output_dir
    seed: int = 0
    success_threshold: float = 1.0  # a rollout with reward >= this is a success
    collector: str | None = None  # OTLP gRPC endpoint of a collector to use; default: the store's owner, else one in-process
    policy_server: PolicyServerConfig = field(default_factory=PolicyServerConfig)
    traces: TracesConfig = field(default_factory=TracesConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    console: bool = True

    base_dir: str = field(default=".", repr=False)  # the config file's folder (not a key)


CHOICES = {
    "algorithm.advantage": ("grpo", "grpo_no_std", "rloo", "reinforce_pp_baseline"),
    "algorithm.credit": ("identical", "discounted", "stepwise"),
    "algorithm.loss": ("ppo_clip", "reinforce"),
    "algorithm.loss_weighting": ("rollout", "token"),
    "algorithm.old_logprobs": ("rollout", "recompute"),
    "aggregate": ("transition", "trajectory"),
    "runner.kind": ("command", "python", "kubernetes"),
    "backend": ("local", "verl"),
    "dtype": ("auto", "float32", "bfloat16"),
}
POSITIVE = {"group_size", "tasks_per_step", "steps", "runner.concurrency", "runner.timeout_s", "micro_batch_tokens",
            "optimizer.lr", "traces.timeout_s", "traces.poll_s", "eval.group_size", "policy_server.max_batch"}
NON_NEGATIVE = {"runner.retries", "checkpoint_every", "algorithm.kl_coef", "algorithm.clip_ratio", "eval.every",
                "traces.quiet_s", "optimizer.weight_decay", "optimizer.max_grad_norm", "algorithm.entropy_coef"}
PATHS = {"model", "tasks", "output_dir", "eval.tasks", "runner.workdir", "runner.kubernetes.template"}


def load_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """Read, validate and resolve a config file (``overrides``: dotted keys -> values)."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys at the top level")
    for key, value in (overrides or {}).items():
        _set_dotted(data, key, value)
    return parse_config(data, base_dir=path.resolve().parent)


def parse_config(data: dict, base_dir: str | Path = ".") -> TrainConfig:
    config = _build(TrainConfig, data, "")
    config.base_dir = str(base_dir)
    _validate(config)
    _resolve_paths(config, Path(base_dir))
    return config


def _build(cls, data, prefix: str):
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls) if f.name != "base_dir"}
    kwargs = {}
    for key, value in data.items():
        dotted = prefix + str(key)
        if key not in known:
            close = difflib.get_close_matches(str(key), list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(sorted(known))}"
            raise ConfigError(f"{dotted}: unknown key{hint}")
        kwargs[key] = _coerce(hints[key], value, dotted)
    missing = [name for name, f in known.items()
               if name not in kwargs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{prefix + missing[0]}: required key missing")
    return cls(**kwargs)


def _coerce(hint, value, dotted: str):
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if value is None and type(None) in args:
            return None
        hint = next(a for a in args if a is not type(None))
        return _coerce(hint, value, dotted)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value if value is not None else {}, dotted + ".")
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{dotted}: expected true or false, got {value!r}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{dotted}: expected an integer, got {value!r}")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):  # YAML reads 1e-5 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{dotted}: expected a number, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{dotted}: expected a string, got {value!r}")
    if hint is dict or origin is dict:
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()} if dotted.endswith("env") else value
        raise ConfigError(f"{dotted}: expected a mapping, got {value!r}")
    if hint is list or origin is list:
        if isinstance(value, list):
            return value
        raise ConfigError(f"{dotted}: expected a list, got {value!r}")
    return value


def _get(config, dotted: str):
    value = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def _validate(config: TrainConfig) -> None:
    for dotted, allowed in CHOICES.items():
        value = _get(config, dotted)
        if value not in allowed:
            raise ConfigError(f"{dotted}: {value!r} is not one of {', '.join(allowed)}")
    for dotted in POSITIVE:
        if not _get(config, dotted) > 0:
            raise ConfigError(f"{dotted}: must be greater than 0, got {_get(config, dotted)!r}")
    for dotted in NON_NEGATIVE:
        if _get(config, dotted) < 0:
            raise ConfigError(f"{dotted}: must not be negative, got {_get(config, dotted)!r}")
    try:
        re.compile(config.agents)
    except re.error as exc:
        raise ConfigError(f"agents: not a valid regular expression ({exc})") from None
    runner = config.runner
    if runner.kind == "command" and not runner.command:
        raise ConfigError("runner.command: required when runner.kind is command")
    if runner.kind == "python" and (not runner.function or ":" not in runner.function):
        raise ConfigError("runner.function: required when runner.kind is python, as 'module:function' "
                          "or 'path/to/file.py:function'")
    if runner.kind == "kubernetes" and not (runner.kubernetes.image or runner.kubernetes.template):
        raise ConfigError("runner.kubernetes.image: required when runner.kind is kubernetes (or a template)")
    if len(config.optimizer.betas) != 2:
        raise ConfigError("optimizer.betas: expected two numbers")
    if config.group_size < 2 and config.algorithm.advantage in ("grpo", "grpo_no_std", "rloo"):
        raise ConfigError(f"group_size: {config.algorithm.advantage} needs at least 2 rollouts per task")


def _resolve_paths(config: TrainConfig, base: Path) -> None:
    for dotted in PATHS:
        value = _get(config, dotted)
        if value and not Path(value).is_absolute():
            parent_path, _, name = dotted.rpartition(".")
            owner = _get(config, parent_path) if parent_path else config
            setattr(owner, name, str((base / value).resolve()))


def _set_dotted(data: dict, dotted: str, value) -> None:
    parts = dotted.split(".")
    for part in parts[:-1]:
        data = data.setdefault(part, {})
    data[parts[-1]] = value


def as_dict(config: TrainConfig) -> dict:
    out = dataclasses.asdict(config)
    out.pop("base_dir", None)
    return out
