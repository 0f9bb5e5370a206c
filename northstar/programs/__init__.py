"""The program broker: stored procedures written in Python, run as child processes.

A program file holds a literal ``PROGRAM = {...}`` declaration (name, version, params,
tabs, outputs, done_when, setup, signed_in; read with ``ast``, never run: ``declaration``,
``program_file``) and ``async def main(nx)`` written with ``northstar.sdk``. The broker
(``broker.ProgramBroker``) gives each run an execution id and credential, checks the
definition before each iteration, starts the program (``child_process``) and carries out
each of its calls with the agent path's session core, composed in (``session``, ``calls``);
the iteration is verified only by the four pieces in ``verdict``.

May import: the core, ``northstar.composition``, the public modules of ``northstar.agent``
(its session core; never a private ``_x`` module) and ``northstar.sdk`` (the wire
format). Never another front end, and never ``browser_adapters`` (the composition root
wires it in).
"""

from northstar.programs.broker import ProgramBroker
from northstar.programs.declaration import ProgramDeclaration, load_program
from northstar.programs.running import is_program, program_compiled, run_program
from northstar.programs.verdict import IterationEvidence, program_verdict

__all__ = [
    "IterationEvidence",
    "ProgramBroker",
    "ProgramDeclaration",
    "is_program",
    "load_program",
    "program_compiled",
    "program_verdict",
    "run_program",
]
