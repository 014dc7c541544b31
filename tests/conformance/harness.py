"""Send one request sequence to several Connect workers and compare their normalised answers.

Requests are written with placeholders: `<<dir>>` is the target's data folder, any other `<<word>>`
is a connector/topic name unique to the test and to the target (each target gets its own, since
both workers share one broker and sink names decide consumer groups). Answers are normalised back
to the placeholders (see normalise.py), then compared: every target against the step's expected
status (the reference's), and the targets' bodies against each other (or against the recorded
golden answers when only one target runs). Differences are collected and reported together.
"""

from __future__ import annotations

import difflib
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .normalise import normalise_body, normalise_location, token_map

TOKEN = re.compile(r"<<([A-Za-z0-9_.]+)>>")
# A cluster's answers while it rebalances or catches up with a concurrent config change: the request did
# nothing and a client retries it (contract 1.9: 409s on forwarding endpoints, 500 on reads).
TRANSIENT = (
    (500, "Request cannot be completed because a rebalance is expected"),
    (409, "Cannot complete request momentarily due to stale configuration"),
    (409, "Cannot complete request because of a conflicting operation"),
)
SETTLE_S = 45.0
# Reads from a cluster follower are eventually consistent (contract 2.5: "tests poll"): in distributed mode
# a GET is asked again, of every target, until the answers agree (or this long), and the last ones compared.
CONVERGE_S = 15.0
ORACLE = "oracle"
OURS = "ours"


@dataclass(frozen=True)
class Deliberate:
    """A difference section 0 of the spec asks for: the reference answers `status`, we answer `ours`.

    `why` quotes section 0. `ours_contains` are substrings our message must contain.
    """

    why: str
    ours: int
    ours_contains: tuple[str, ...] = ()
    # Section 0 also says every error body carries application/json; the oracle's Jersey
    # answers for unknown URLs/405 carry none. Only our side is checked for it.


@dataclass
class Target:
    name: str  # ORACLE or OURS
    url: str
    datadir: Path
    client: httpx.Client
    logs: Callable[[], str] = lambda: ""  # the target's log tail, shown when it never reaches a polled state

    @property
    def tag(self) -> str:
        return "o" if self.name == ORACLE else "r"


@dataclass
class Answer:
    status: int
    body: Any  # normalised JSON, raw text when not JSON, None when empty
    location: str | None
    content_type: str | None
    raw: Any = None  # un-normalised JSON (for predicates that need real names)


@dataclass
class Step:
    index: int
    label: str
    method: str
    path: str
    request: Any
    answers: dict[str, Answer] = field(default_factory=dict)


class Golden:
    """Recorded oracle answers: tests/conformance/golden/oracle-3.9.json, keyed test -> step list."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, list[dict[str, Any]]] = json.loads(path.read_text()) if path.exists() else {}
        self.dirty = False

    def record(self, test: str, steps: list[dict[str, Any]]) -> None:
        self.data[test] = steps
        self.dirty = True

    def save(self) -> None:
        if self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One line per step: small, and a re-recording diffs step by step.
            parts = []
            for test, steps in sorted(self.data.items()):
                lines = ",\n".join("  " + json.dumps(step, sort_keys=True) for step in steps)
                parts.append(f" {json.dumps(test)}: [\n{lines}\n ]")
            self.path.write_text("{\n" + ",\n".join(parts) + "\n}\n")


class Conformance:
    """One test's view of the targets: `call`, `poll`, and the collected differences."""

    def __init__(
        self,
        test_id: str,
        targets: list[Target],
        golden: Golden | None,
        recording: bool,
        bootstrap_servers: str = "",
        settle: bool = False,
    ) -> None:
        self.test_id = test_id
        self.settle = settle  # clusters: retry TRANSIENT answers instead of comparing them
        self.bootstrap_servers = bootstrap_servers
        self.targets = targets
        self.golden = golden
        self.recording = recording
        self.uid = uuid.uuid4().hex[:6]
        self.steps: list[Step] = []
        self.diffs: list[str] = []

    # ---- placeholders -------------------------------------------------------------------------
    def value(self, target: Target, token: str) -> str:
        if token == "dir":
            return str(target.datadir)
        return f"cf-{token}-{self.uid}{target.tag}"

    def expand(self, target: Target, obj: Any) -> Any:
        if isinstance(obj, str):
            return TOKEN.sub(lambda m: self.value(target, m.group(1)), obj)
        if isinstance(obj, dict):
            return {self.expand(target, k): self.expand(target, v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.expand(target, v) for v in obj]
        return obj

    def tokens(self, target: Target, *texts: Any) -> dict[str, str]:
        """Actual value -> placeholder, for every placeholder seen in this test so far."""
        seen = set()
        for step in self.steps:
            seen.update(TOKEN.findall(json.dumps([step.path, step.request])))
        for text in texts:
            seen.update(TOKEN.findall(json.dumps(text)))
        return token_map({self.value(target, t): f"<<{t}>>" for t in seen})

    def path_of(self, target: Target, token: str) -> Path:
        """A real file path for `<<dir>>/...` style placeholders, on one target."""
        return Path(self.expand(target, token))

    # ---- requests -----------------------------------------------------------------------------
    def _send(
        self,
        target: Target,
        method: str,
        path: str,
        body: Any,
        raw: str | None,
        params: Any,
        headers: dict[str, str] | None,
    ) -> Answer:
        url_path = self.expand(target, path)
        kwargs: dict[str, Any] = {"params": self.expand(target, params) if params else None, "headers": headers or {}}
        if raw is not None:
            kwargs["content"] = self.expand(target, raw).encode()
            kwargs["headers"] = {"Content-Type": "application/json", **kwargs["headers"]}
        elif body is not None:
            kwargs["json"] = self.expand(target, body)
        response = target.client.request(method, url_path, **kwargs)
        deadline = time.monotonic() + SETTLE_S
        while self.settle and _transient(response) and time.monotonic() < deadline:
            time.sleep(0.25)  # the poll interval of a wait for a transient answer to pass
            response = target.client.request(method, url_path, **kwargs)
        try:
            parsed = response.json() if response.content else None
        except ValueError:
            parsed = response.text
        mapping = self.tokens(target, path, body, raw, params)
        return Answer(
            status=response.status_code,
            body=normalise_body(parsed, mapping),
            location=normalise_location(response.headers.get("location"), target.url, mapping),
            content_type=response.headers.get("content-type"),
            raw=parsed,
        )

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        status: int,
        raw: str | None = None,
        params: Any = None,
        headers: dict[str, str] | None = None,
        label: str = "",
        project: Callable[[Any], Any] | None = None,
        deliberate: Deliberate | None = None,
        compare_body: bool = True,
    ) -> Step:
        """Send the request to every target; `status` is the reference's status code.

        `project` maps a normalised body to the part that must match (e.g. the reference's plugins
        only); `deliberate` marks a section-0 difference (our status differs, bodies not compared).
        """
        step = Step(len(self.steps), label or f"{method} {path}", method, path, raw if raw is not None else body)
        self.steps.append(step)
        deadline = time.monotonic() + CONVERGE_S
        while True:
            for target in self.targets:
                answer = self._send(target, method, path, body, raw, params, headers)
                if project is not None and answer.body is not None and answer.status < 400:
                    answer.body = project(answer.body)
                step.answers[target.name] = answer
            converging = self.settle and method == "GET" and deliberate is None
            if not converging or _agree(step.answers, status, compare_body) or time.monotonic() > deadline:
                break
            time.sleep(0.25)  # the poll interval of a wait for the targets to agree
        self._check(step, status, deliberate, compare_body)
        return step

    def poll(
        self,
        path: str,
        until: Callable[[Any], bool],
        *,
        status: int = 200,
        label: str = "",
        timeout_s: float = 45.0,
        project: Callable[[Any], Any] | None = None,
        only: str | None = None,
    ) -> Step:
        """GET `path` on each target (or only the one named `only`) until `until(normalised body)` holds
        (or time out), then compare."""
        step = Step(len(self.steps), label or f"GET {path} (polled)", "GET", path, None)
        self.steps.append(step)
        for target in self.targets:
            if only is not None and target.name != only:
                continue
            deadline = time.monotonic() + timeout_s
            while True:
                answer = self._send(target, "GET", path, None, None, None, None)
                if answer.status == status and _holds(until, answer.body):
                    break
                if time.monotonic() > deadline:
                    self.diffs.append(
                        f"[{step.index}] {step.label}: {target.name} never satisfied the "
                        f"condition in {timeout_s}s; last: {answer.status} {_dump(answer.body)}"
                        + (f"\n{target.name}'s log, last lines:\n{log}" if (log := target.logs()) else "")
                    )
                    break
                time.sleep(0.25)  # the poll interval of a wait for `until`
            if project is not None and answer.body is not None and answer.status < 400:
                answer.body = project(answer.body)
            step.answers[target.name] = answer
        self._check(step, status, None, True)
        return step

    def note(self, message: str) -> None:
        """A difference found by a custom check."""
        self.diffs.append(message)

    # ---- comparison ---------------------------------------------------------------------------
    def _check(self, step: Step, status: int, deliberate: Deliberate | None, compare_body: bool) -> None:
        head = f"[{step.index}] {step.label}"
        for name, answer in step.answers.items():
            want = deliberate.ours if (deliberate and name == OURS) else status
            if answer.status != want:
                why = f" (deliberate, spec section 0: {deliberate.why})" if deliberate and name == OURS else ""
                self.diffs.append(
                    f"{head}: {name} answered {answer.status}, expected {want}{why}\n    body: {_dump(answer.body)}"
                )
            if name == OURS and answer.status >= 400:
                self._check_our_error(head, answer, deliberate)
        if not compare_body or (deliberate is not None):
            return
        if ORACLE in step.answers and OURS in step.answers:
            self._compare(head, step.answers[ORACLE], step.answers[OURS], "oracle", "ours")
        elif self.golden is not None and not self.recording:
            recorded = self.golden.data.get(self.test_id)
            only = next(iter(step.answers.values()))
            if recorded is None or step.index >= len(recorded):
                self.diffs.append(f"{head}: no golden answer recorded (run with CONFORMANCE_RECORD=1)")
                return
            gold = recorded[step.index]
            if gold["request"] != f"{step.method} {step.path}":
                self.diffs.append(f"{head}: golden step is {gold['request']!r}; re-record the golden file")
                return
            expected = Answer(gold["status"], gold.get("body"), gold.get("location"), None)
            self._compare(head, expected, only, "golden", next(iter(step.answers)))

    def _check_our_error(self, head: str, answer: Answer, deliberate: Deliberate | None) -> None:
        # Section 0: every error body is {"error_code", "message"} with Content-Type application/json.
        body = answer.body
        if not (answer.content_type or "").startswith("application/json"):
            self.diffs.append(
                f"{head}: ours error without Content-Type application/json "
                f"(spec section 0); got {answer.content_type!r}"
            )
        if not (
            isinstance(body, dict) and body.get("error_code") == answer.status and isinstance(body.get("message"), str)
        ):
            self.diffs.append(f"{head}: ours error body is not {{error_code, message}}: {_dump(body)}")
        elif deliberate:
            for part in deliberate.ours_contains:
                if part not in body["message"]:
                    self.diffs.append(
                        f"{head}: ours message lacks {part!r} (spec section 0: "
                        f"{deliberate.why}); got {body['message']!r}"
                    )

    def _compare(self, head: str, want: Answer, got: Answer, want_name: str, got_name: str) -> None:
        if want.status != got.status:
            return  # already reported against the expected status
        if want.body != got.body:
            self.diffs.append(f"{head}: body differs\n{_diff(want.body, got.body, want_name, got_name)}")
        if want.location != got.location:
            self.diffs.append(f"{head}: Location differs: {want_name} {want.location!r}, {got_name} {got.location!r}")

    # ---- results ------------------------------------------------------------------------------
    def transcript(self, target: str) -> list[dict[str, Any]]:
        out = []
        for step in self.steps:
            answer = step.answers.get(target)
            if answer is None:
                continue
            entry: dict[str, Any] = {"request": f"{step.method} {step.path}", "status": answer.status}
            if step.request is not None:
                entry["sent"] = step.request
            if answer.body is not None:
                entry["body"] = answer.body
            if answer.location is not None:
                entry["location"] = answer.location
            out.append(entry)
        return out

    def report(self) -> str:
        names = ", ".join(t.name for t in self.targets)
        return f"{len(self.diffs)} conformance difference(s) in {self.test_id} [{names}]:\n\n" + "\n\n".join(self.diffs)


def _agree(answers: dict[str, Answer], status: int, compare_body: bool) -> bool:
    """Every target answered `status` and, when bodies are compared, the same body and Location."""
    first = next(iter(answers.values()))
    return all(
        a.status == status and (not compare_body or (a.body, a.location) == (first.body, first.location))
        for a in answers.values()
    )


def _transient(response: httpx.Response) -> bool:
    try:
        message = response.json().get("message", "") if response.content else ""
    except (ValueError, AttributeError):
        return False
    return any(
        response.status_code == status and isinstance(message, str) and message.startswith(text)
        for status, text in TRANSIENT
    )


def _holds(until: Callable[[Any], bool], body: Any) -> bool:
    try:
        return bool(until(body))
    except (KeyError, TypeError, IndexError, AttributeError):
        return False


def _dump(body: Any) -> str:
    text = json.dumps(body, sort_keys=True)
    return text if len(text) <= 600 else text[:600] + "..."


def _diff(want: Any, got: Any, want_name: str, got_name: str) -> str:
    a = json.dumps(want, indent=1, sort_keys=True).splitlines()
    b = json.dumps(got, indent=1, sort_keys=True).splitlines()
    lines = list(difflib.unified_diff(a, b, want_name, got_name, lineterm="", n=2))
    if len(lines) > 80:
        lines = lines[:80] + [f"... ({len(lines) - 80} more diff lines)"]
    return "\n".join("    " + line for line in lines)
