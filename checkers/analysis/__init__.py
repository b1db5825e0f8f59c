"""What the heuristic rules ask of one module's code, answered once, in one place.

A rule module is its declaration, its documentation, its VALID and INVALID
examples and a short ``check``; what it needs to know about the code it reads
lives here, named for the question it answers:

* ``imports``: what each import statement loads and binds -- the one import
  model, read by the project index, the cross-file kinds and the rules;
* ``memo``: what an analysis computed from one top-level statement, kept
  while the language server's next tree still holds that statement;
* ``names``: how an expression is spelled (``torch.cat`` for a name or an
  attribute chain, a call's short name, a decorator);
* ``scopes``: a function's parameters, its ``self``, what a name is bound to,
  and the marker nodes for "an element of" and "a part of" a value;
* ``bindings``: one pass over a module recording, per function, every binding
  with the blocks around it, every call site, and the ``if`` tests that guard
  a block;
* ``shapes``: what one node is on its face (a view of its argument, a read of
  the environment, a literal, a record class), from the node alone;
* ``origins``: whether a value comes from input (a parameter, a config, the
  environment) or was computed here (``input-assert``), with ``class_facts``:
  what a constructor copies from input; ``own_values``: what the function
  computed itself; ``callers``: what a private helper's callers hand it;
  ``protocol``: what an object and its module keep for themselves; ``verdicts``:
  the ``Origin`` each answer is; and ``asserts``: what an assert statement is
  apart from its value (a test's, its exception, its fix);
* ``int_kinds``: whether a value is a host int, a host tensor or a device
  tensor (``required-keyword``'s ``repeats``), weighing the evidence
  ``int_evidence`` reads off one node.

Nothing here imports or runs the code it reads; it reads one module's AST.
"""
