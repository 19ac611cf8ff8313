"""Runtime verifier: prove a device fix keeps outputs, and catch on a CPU-only
machine the device mismatches a GPU would raise.

Importing this package stays cheap (the pytest plugin loads it in every pytest
run): torch is imported only by the modules that need it.
"""
