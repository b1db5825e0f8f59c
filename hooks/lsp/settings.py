"""The server's settings: ``diagnosticMode`` and ``debounceMs``, at start and at run time.

Read from ``initializationOptions``, then from every
``workspace/didChangeConfiguration`` (the server's ``atom-contracts`` section,
or the settings object itself where a client sends its own table), and asked
of a client that answers ``workspace/configuration``. A bad value is named in
a warning and the others still apply.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from . import convert
from .guard import guarded

NAME = "atom-contracts"  # the server's name, and its section of a client's settings
MODES = ("auto", "push", "pull")
MAX_DEBOUNCE_MS = 10_000


def settings_problems(table: dict, *, ours: bool) -> tuple[dict, list[str]]:
    """The valid settings of ``table`` and a sentence naming each bad one.

    ``ours``: the table is the server's own (its ``initializationOptions``, its
    section), so a key it does not know is named too; a client's whole
    settings object may hold other servers' sections beside ours.
    """
    good: dict = {}
    problems: list[str] = []
    for key, value in table.items():
        if key == "diagnosticMode":
            if value in MODES:
                good[key] = value
            else:
                problems.append(
                    f"diagnosticMode must be one of {', '.join(map(repr, MODES))}, not {value!r}"
                )
        elif key == "debounceMs":
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number and 0 <= value <= MAX_DEBOUNCE_MS:
                good[key] = value
            else:
                problems.append(
                    f"debounceMs must be a number of milliseconds from 0 to {MAX_DEBOUNCE_MS}, "
                    f"not {value!r}"
                )
        elif ours:
            problems.append(
                f"unknown setting {key!r} (the settings are diagnosticMode, debounceMs)"
            )
    return good, problems


class Settings:
    """The settings half of ``ContractsServer``: applying them, and what changes with them."""

    def configure(self, settings, *, where: str) -> None:
        """Apply ``diagnosticMode`` and ``debounceMs`` from ``settings``; each bad value is
        named in a warning and the others still apply.

        ``settings`` is the server's own table (``initializationOptions``) or a
        client's settings object, where the server's table is the
        ``atom-contracts`` section (Neovim's ``settings``, eglot's
        ``eglot-workspace-configuration``) or the object itself (Helix sends its
        ``config`` table).
        """
        if settings is None:
            return
        if not isinstance(settings, dict):
            self.warn(f"{where}: expected a table of settings, not {settings!r}")
            return
        section = settings.get(NAME)
        if isinstance(section, dict):
            good, problems = settings_problems(section, ours=True)
        else:
            good, problems = settings_problems(settings, ours=where == "initializationOptions")
        for problem in problems:
            self.warn(f"{where}: {problem}; ignored")
        if "debounceMs" in good:
            self.set_debounce(good["debounceMs"] / 1000)
        if "diagnosticMode" in good:
            self.set_mode(good["diagnosticMode"])

    def warn(self, message: str) -> None:
        self.log(types.MessageType.Warning, f"{NAME}: {message}")

    def set_debounce(self, seconds: float) -> None:
        """The new debounce, for the next keystroke and for the checks already waiting
        (each now due ``seconds`` after its change, or at once if that has passed)."""
        import asyncio

        old, self.debounce_s = self.debounce_s, seconds
        if old == seconds or not self._pending:
            return
        loop = asyncio.get_running_loop()
        for uri, handle in list(self._pending.items()):
            handle.cancel()
            due = max(handle.when() - old + seconds, loop.time())
            self._pending[uri] = loop.call_at(due, self._push_guarded, uri)

    def set_mode(self, mode: str) -> None:
        """Push or pull from now on: moving to pull withdraws what was pushed (a pulling
        client would show it twice) and asks the client to pull; moving to push pushes
        every open buffer and every unopened file holding a cross-file finding."""
        was = self.pushing
        self.mode = mode
        if self.pushing == was:
            return
        if not self.pushing:
            broken = {from_fs_path(str(d.pyproject)) for d in self.declarations.values() if d.error}
            for uri in list(self.published - broken):
                self.publish(uri, [], None, force=True)
            self.refresh()
            return
        self.recheck_open()
        codec = self.workspace.position_codec
        for uri, findings in list(self.swept.items()):
            path = to_fs_path(uri)
            declaration = self.declaration_for(path) if path else None
            text = (declaration.disk_text(path) if declaration else None) or ""
            self.publish(uri, convert.diagnostics(findings, text, codec), None)

    def ask_settings(self) -> None:
        """Ask a client that answers ``workspace/configuration`` for the server's section
        (VS Code's client sends a change with no settings in it, and answers this)."""
        caps = self.client_capabilities.workspace
        if caps is None or not caps.configuration:
            return

        def answered(future) -> None:
            if future.cancelled() or future.exception() is not None:
                return  # the client would not say: the settings stay as they are
            result = future.result()
            if result:
                self.configure(result[0], where="workspace/configuration")

        future = self.workspace_configuration(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=NAME)])
        )
        future.add_done_callback(answered)


def register(server) -> None:
    """The settings' one notification: a change that carries them, or one that says to ask."""

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    def settings_changed(ls, params: types.DidChangeConfigurationParams):
        settings = params.settings
        if settings is None or settings == {}:
            ls.ask_settings()  # the change says only that something changed
        else:
            ls.configure(settings, where="workspace/didChangeConfiguration")
