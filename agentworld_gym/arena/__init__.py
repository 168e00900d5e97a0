"""The self-evolving arena: episode records (records), failure diagnosis (diagnose), targeting
(target), evolve rounds (evolve) and the HTML report (report). Import the submodules directly."""
