"""Run the suite's own run.py with a chosen number of device slots (scripts/parity.py).

run.py starts one copy of a per-GPU job per `torch.cuda.device_count()` device (run.py:44,
131-136): on a machine without a GPU that is zero copies, so nothing runs. This launcher
imports torch, makes `torch.cuda.device_count()` answer PARITY_DEVICE_SLOTS (1 by default),
then runs run.py unchanged as __main__ with the remaining arguments. Nothing else in run.py
or in the scripts it starts is touched: they run in processes of their own, with the real
torch.

Usage: python parity_runpy.py SUITE/run.py [run.py arguments...]
"""
import os
import runpy
import sys

import torch

slots = int(os.environ.get('PARITY_DEVICE_SLOTS', '1'))
if not torch.cuda.is_available() or slots != torch.cuda.device_count():
    torch.cuda.device_count = lambda: slots

script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name='__main__')
