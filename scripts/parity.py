#!/usr/bin/env python3
"""Parity harness: the Mila suite's own scripts against `mlbench run`, job by job.

For each selected job of a jobs file it runs, alternately and repetition by repetition,
  1. the suite's run.py (mila-iqia/training checkout given by the user) with the suite's
     environment (SUITE_NAME, RUN_ID, JOB_ID, CUDA_VISIBLE_DEVICES, CPU_COUNT, BASE, ...),
     its command-line construction and its seed (RUN_ID + 100 for a per-GPU job's first
     copy, RUN_ID + DEVICE_TOTAL for a whole-machine job), and
  2. `mlbench run` on the same jobs file, job, RUN_ID and so the same seed,
then reads both sides' report JSON and writes a Markdown table (PARITY.md) and the raw
figures (parity.json) under --out.

It fetches nothing: the user gives a checkout of mila-iqia/training and a Python with
torch (and torchvision, numpy, pillow, tqdm, GitPython for the scripts' imports). Both
sides read the same files under BASE/data (the suite's $DATA_DIRECTORY, which mlbench
gets too): the fake ImageNet made by the suite's own dataset/fake_imagenet.py;
`mlbench data prepare`'s MNIST (vae), MovieLens 20M conversion (recom), WMT16 (translator) and sine waves
(toy_lstm: the .npy mlbench reads, and the same values saved as the traindata.pt the
script torch.loads, checked equal); the wikitext-2 the suite ships (wlm reads it through
BASE/data/wikitext-2, a link to the checkout's copy); a same-shaped synthetic BSDS500
that the table labels as such. Jobs whose data, packages or device cannot be had here are
listed with the reason.

What the harness changes, on both sides alike: the jobs file is reduced to the selected
job, with the smoke overrides (--repeat, --number, --batch-size, --set) applied. On the
suite side only, and only with --device cpu: the job's `--cuda` flag becomes `--no-cuda`
(the scripts' own switch; mlbench decides the device with --devices cpu), run.py sees one
device slot (scripts/parity_runpy.py; without a GPU it would start no copy of a per-GPU
job), compute_resource.sh is skipped in favour of the same figures mlbench uses
(DEVICE_TOTAL=1, CPU_COUNT=--threads), cgexec/nocache are off (run.py's --no-cgexec
--no-nocache), config.env's page-cache drop is skipped (SINGULARITY_NAME set) unless
--drop-caches, and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 lets toy_lstm's `torch.load` of a
numpy array work on torch >= 2.6. dcgan gets `--ngpu 1` on CPU on both sides (main.py:43-52
multiplies the batch by torch.cuda.device_count(), 0 without a GPU; 1 is what a one-GPU
copy records).

Usage: see scripts/parity.sh or `parity.py --help`.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Why a job cannot run here, by what it needs. 'cuda': needs a CUDA device whatever the
# data; 'modules': Python modules the script imports; 'data': a local data set the
# harness can make; 'download': data or weights only a download gives.
NEEDS = {
    'toy_reg': {},
    'toy_lstm': {'data': 'sine'},
    'vae': {'data': 'mnist'},
    'loader': {'data': 'imagenet'},
    'reso': {'data': 'bsds500'},
    'translator': {'data': 'wmt16', 'modules': ['mlperf_compliance']},
    'wlm': {'data': 'wikitext2'},
    'wlmfp16': {'cuda': 'main_fp16_optimizer.py casts the model to torch.cuda.HalfTensor '
                        'and uses apex FP16_Optimizer',
                'modules': ['apex']},
    'cart': {'modules': ['gym']},
    'atari': {'modules': ['gym', 'a2c_ppo_acktr'],
              'download': 'gym Atari ROMs (PongNoFrameskip-v4) and the a2c_ppo_acktr '
                          'fork (git, not on PyPI)'},
    'ssd': {'download': 'COCO 2017 and torchvision\'s pretrained ResNet-34 weights'},
    'fast_style': {'download': 'torchvision\'s pretrained VGG-16 weights (vgg.py:10)',
                   'data': 'imagenet'},
    'dcgan': {'data': 'imagenet'},
    'dcgan_all': {'data': 'imagenet'},
    'convnet': {'data': 'imagenet'},
    'convnet_fp16': {'cuda': 'apex FP16_Optimizer / network_to_half on CUDA tensors',
                     'modules': ['apex'], 'data': 'imagenet'},
    'recom': {'data': 'movielens', 'modules': ['scipy']},
    'convnet_distributed': {'cuda': 'conv_distributed.py calls .cuda() unconditionally '
                                    '(:43,45,105-106)', 'data': 'imagenet'},
    'convnet_distributed_fp16': {'cuda': 'conv_distributed.py calls .cuda() unconditionally; '
                                         'apex', 'modules': ['apex'], 'data': 'imagenet'},
    'scaling': {'cuda': 'NCCL DistributedDataParallel over >= 2 GPUs'},
}

STANDIN = {
    'mnist': '`mlbench data prepare`\'s MNIST (the real files\' shapes and IDX format, '
             'seeded synthetic digits), read by both sides',
    'movielens': '`mlbench data prepare`\'s MovieLens 20M and its conversion '
                 '(train-ratings.csv), read by both sides',
    'bsds500': 'synthetic stand-in for BSDS500 (200 train / 200 test random-noise JPEGs '
               '481x321): BSDS500 is a download',
    'imagenet': 'the suite\'s own fake ImageNet (dataset/fake_imagenet.py, 512x512 noise '
                'JPEGs, 1000 classes), {n} images instead of 102,400',
    'wmt16': '`mlbench data prepare`\'s WMT16 (the real files\' layout: a BPE vocabulary of '
             '32,313 tokens and 4.5 million seeded sentence pairs), read by both sides',
    'sine': '`mlbench data prepare`\'s sine waves (generate_sine_wave.py\'s values from its '
            'seed) as traindata.npy for mlbench and the same array as traindata.pt for the '
            'script, checked equal',
}


def prepare(opt, bench):
    """`mlbench data prepare BASE/data --bench BENCH` (called only where its files are not
    there yet: it refuses to replace a set)."""
    data = os.path.join(opt.base, 'data')
    r = sh([opt.mlbench, 'data', 'prepare', data, '--bench', bench], env=mlbench_env(os.environ))
    if r.returncode:
        raise RuntimeError(f'mlbench data prepare --bench {bench} failed: '
                           + (r.stdout + r.stderr)[-800:])

# Argument keys that always differ between two processes (or two runtimes) and say
# nothing about the work.
ALWAYS_DIFFER = {'unique_id', 'version', 'start_time', 'end_time', 'hostname', 'gpu',
                 'cpu_cores_actual', 'peak_rss', 'peak_gpu_mem'}


def log(msg):
    print(f'[parity {datetime.datetime.utcnow():%H:%M:%S}] {msg}', flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# ------------------------------------------------------------------------------------------
# Jobs

def derive_job(job, opt):
    """The selected job with the smoke overrides applied (both sides)."""
    args = dict(job['args'])
    for flag in ('repeat', 'number', 'batch_size'):
        value = getattr(opt, flag)
        name = '--' + flag.replace('_', '-')
        if value is not None and (name in args or flag != 'batch_size'):
            args[name] = value
    for item in opt.set:
        bench, _, rest = item.partition(':')
        flag, _, value = rest.partition('=')
        if bench != job['name']:
            continue
        if value == '' and rest.endswith('='):
            args.pop(flag, None)  # --set bench:--flag=  removes a flag
        else:
            args[flag] = auto(value)
    if opt.device == 'cpu' and job['name'] == 'dcgan' and '--ngpu' not in args:
        args['--ngpu'] = 1
    out = dict(job)
    out['args'] = args
    return out


def suite_side_job(job, opt):
    """The suite side's copy: on CPU the scripts' own switch, --no-cuda."""
    out = dict(job)
    if opt.device == 'cpu':
        args = {k: v for k, v in job['args'].items() if k != '--cuda'}
        args['--no-cuda'] = ''
        out['args'] = args
    return out


def auto(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


# ------------------------------------------------------------------------------------------
# Data

def count_files(root):
    n = 0
    for _, _, files in os.walk(root):
        n += len(files)
    return n


def make_data(kind, opt, env, suite, needed_images):
    """Makes (or reuses) one data set under BASE/data; returns a note for the table."""
    data = os.path.join(opt.base, 'data')
    os.makedirs(data, exist_ok=True)
    if kind == 'sine':
        folder = os.path.join(data, 'time_series_prediction')
        npy, target = os.path.join(folder, 'traindata.npy'), os.path.join(folder, 'traindata.pt')
        if not os.path.exists(npy):
            log('toy_lstm data: mlbench data prepare --bench toy_lstm')
            prepare(opt, 'toy_lstm')
        # The script torch.loads a pickled array: the same values, saved by the suite's
        # Python, and checked against its own generator's formula.
        code = ('import sys, numpy as np, torch\n'
                'a = np.load(sys.argv[1])\n'
                'np.random.seed(2); T = 20; L = a.shape[1]; N = a.shape[0]\n'
                'x = np.empty((N, L), "int64"); x[:] = np.array(range(L)) '
                '+ np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)\n'
                'assert np.array_equal(a, np.sin(x / 1.0 / T).astype("float64")), "values differ"\n'
                'torch.save(a, sys.argv[2])\n')
        r = sh([opt.python, '-c', code, npy, target], env=env)
        if r.returncode:
            raise RuntimeError('traindata.pt from traindata.npy failed: ' + r.stderr[-500:])
        return STANDIN['sine']
    if kind == 'movielens':
        if not os.path.exists(os.path.join(data, 'ml-20m', 'train-ratings.csv')):
            log('recom data: mlbench data prepare --bench recom')
            prepare(opt, 'recom')
        return STANDIN['movielens']
    if kind == 'imagenet':
        train = os.path.join(data, 'ImageNet', 'train')
        have = count_files(train) if os.path.isdir(train) else 0
        if have < 0.98 * needed_images:  # a few same-class names collide (fake_imagenet.py:22)
            log(f'fake ImageNet: {needed_images} images with dataset/fake_imagenet.py '
                f'(have {have})')
            shutil.rmtree(train, ignore_errors=True)
            os.makedirs(train)
            # all_count = batch * number * repeat; split over min(cpu, 4) processes.
            # torchvision >= 0.8's FakeData returns the label as an int; the generator
            # (written for 0.4) calls `y.item()`: give it a tensor, change nothing else.
            shim = ('import runpy, sys, torch, torchvision.datasets as D\n'
                    'class FakeData(D.FakeData):\n'
                    '    def __getitem__(self, i):\n'
                    '        img, y = super().__getitem__(i)\n'
                    '        return img, torch.tensor(y)\n'
                    'D.FakeData = FakeData\n'
                    'sys.argv = sys.argv[1:]\n'
                    'runpy.run_path(sys.argv[0], run_name="__main__")\n')
            r = sh([opt.python, '-c', shim, os.path.join(suite, 'dataset', 'fake_imagenet.py'),
                    '--output', train, '--size', '512', '--class-num', '1000',
                    '--batch-size', str(needed_images), '--number', '1', '--repeat', '1'],
                   env=env, cwd=suite)
            if r.returncode:
                raise RuntimeError('fake_imagenet.py failed: ' + (r.stdout + r.stderr)[-800:])
            for link in ('val', 'test'):
                p = os.path.join(data, 'ImageNet', link)
                if not os.path.exists(p):
                    os.symlink(train, p)
        return STANDIN['imagenet'].format(n=count_files(train))
    if kind == 'wmt16':
        if not os.path.exists(os.path.join(data, 'wmt16', 'vocab.bpe.32000')):
            log('translator data: mlbench data prepare --bench translator')
            prepare(opt, 'translator')
        return STANDIN['wmt16']
    if kind == 'mnist':
        raw = os.path.join(data, 'mnist', 'MNIST', 'raw')
        if not os.path.exists(os.path.join(raw, 'train-images-idx3-ubyte')):
            log('vae data: mlbench data prepare --bench vae')
            prepare(opt, 'vae')
        return STANDIN['mnist']
    if kind == 'bsds500':
        images = os.path.join(data, 'bsds500', 'BSR', 'BSDS500', 'data', 'images')
        marker = os.path.join(images, 'PARITY_SYNTHETIC')
        if os.path.isdir(os.path.join(images, 'train')) and not os.path.exists(marker):
            return 'BSDS500 found in BASE/data/bsds500'
        if not os.path.exists(marker):
            log('BSDS500: writing a synthetic stand-in')
            code = (
                'import os, sys, numpy as np\nfrom PIL import Image\n'
                'root = sys.argv[1]\nrng = np.random.RandomState(0)\n'
                'for split in ("train", "test"):\n'
                '    d = os.path.join(root, split); os.makedirs(d, exist_ok=True)\n'
                '    for i in range(200):\n'
                '        a = rng.randint(0, 256, (321, 481, 3), dtype=np.uint8)\n'
                '        Image.fromarray(a).save(os.path.join(d, f"{i}.jpg"))\n')
            r = sh([opt.python, '-c', code, images], env=env)
            if r.returncode:
                raise RuntimeError('BSDS500 stand-in failed: ' + r.stderr[-500:])
            open(marker, 'w').write('synthetic stand-in\n')
        return STANDIN['bsds500']
    if kind == 'wikitext2':
        note = wikitext2(suite, opt)
        # mlbench's wlm reads $DATA_DIRECTORY/wikitext-2: the very files the script reads.
        link = os.path.join(data, 'wikitext-2')
        shipped = os.path.join(suite, 'natural_language_processing', 'word_language_model',
                               'data', 'wikitext-2')
        if os.path.islink(link) or os.path.exists(link):
            if os.path.realpath(link) != os.path.realpath(shipped):
                raise RuntimeError(f'{link} is not the suite copy\'s wikitext-2')
        else:
            os.symlink(shipped, link)
        return note + '; both sides read it (BASE/data/wikitext-2 links to it)'

    raise ValueError(kind)


WLM_VOCAB = 33278  # wikitext-2's vocabulary with <eos> (the script's ntokens)


def wikitext2(suite, opt):
    """wlm's data in the suite copy: wikitext-2 ships in the suite, but a snapshot may lack
    train.txt (10 MB); then a stand-in keeps the script's shapes: valid + test text and
    filler words, exactly 33,278 distinct tokens, so the model's sizes are the real ones."""
    d = os.path.join(suite, 'natural_language_processing', 'word_language_model', 'data',
                     'wikitext-2')
    notes = []
    train = os.path.join(d, 'train.txt')
    # An empty train.txt is a blob the snapshot could not give: missing too.
    missing = not os.path.exists(train) or os.path.getsize(train) == 0
    if missing or os.path.exists(train + '.parity'):
        if not os.path.exists(train + '.parity'):
            log('wikitext-2: train.txt missing from the checkout: writing a same-vocabulary stand-in')
            text = open(os.path.join(d, 'valid.txt')).read() + open(os.path.join(d, 'test.txt')).read()
            words = {'<eos>'}
            for line in text.splitlines():
                words.update(line.split())
            fill = [f'parityfiller{i}' for i in range(WLM_VOCAB - len(words))]
            with open(train, 'w') as f:
                f.write(text)
                for i in range(0, len(fill), 20):
                    f.write(' ' + ' '.join(fill[i:i + 20]) + ' \n')
            open(train + '.parity', 'w').write('stand-in\n')
        notes.append('train.txt absent from the checkout: stand-in of the valid and test text '
                     'plus filler words, the real 33,278-token vocabulary (model sizes as the '
                     'script\'s; the timed batches are other tokens)')
    else:
        notes.append('wikitext-2 shipped in the suite')
    if opt.wlm_eval_lines:
        for name in ('valid.txt', 'test.txt'):
            path = os.path.join(d, name)
            keep = os.path.join(d, name + '.full')
            if not os.path.exists(keep):
                shutil.copyfile(path, keep)
            lines = open(keep).readlines()
            open(path, 'w').writelines(lines[:opt.wlm_eval_lines])
        notes.append(f'valid.txt and test.txt cut to their first {opt.wlm_eval_lines} lines '
                     f'(--wlm-eval-lines: the untimed-by-`train` `eval` pass and `val_loss` '
                     f'change; `train` does not)')
    else:
        for name in ('valid.txt', 'test.txt'):
            keep = os.path.join(d, name + '.full')
            if os.path.exists(keep):
                shutil.copyfile(keep, os.path.join(d, name))
    return '; '.join(notes)


def images_needed(job):
    a = job['args']
    batch = int(a.get('--batch-size', 1))
    number = int(a.get('--number', 10))
    return batch * (number + 1)


# ------------------------------------------------------------------------------------------
# Running

# The scripts were written for torch 1.3-1.5. One behaviour they rely on changed since:
# torch.full with an integer fill and no dtype made a float tensor until torch 1.7 and a
# long one after, which breaks dcgan's BCELoss(output, torch.full((B,), 1)) (main.py:235).
# This sitecustomize (first on the suite side's PYTHONPATH) restores the old dtype rule for
# that call only; nothing else in torch is touched.
SITECUSTOMIZE = '''\
import os
if os.environ.get('PARITY_TORCH_COMPAT') == '1':
    import torch
    _full = torch.full

    def full(size, fill_value, *args, **kwargs):
        if not args and 'dtype' not in kwargs and 'out' not in kwargs \\
                and isinstance(fill_value, int) and not isinstance(fill_value, bool):
            kwargs['dtype'] = torch.get_default_dtype()
        return _full(size, fill_value, *args, **kwargs)

    torch.full = full
'''


def write_pycompat(opt):
    d = os.path.join(opt.out, 'pycompat')
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'sitecustomize.py'), 'w') as f:
        f.write(SITECUSTOMIZE)


def suite_env(opt, suite, shim):
    env = dict(os.environ)
    for k in ('SUITE_NAME', 'JOB_FILE', 'RUN_ID', 'JOB_ID', 'CUDA_VISIBLE_DEVICES',
              'OUTPUT_DIRECTORY', 'BENCH_NAME', 'PROC_COUNT'):
        env.pop(k, None)
    env.update({
        'BASE': opt.base,
        'DATA_DIRECTORY': os.path.join(opt.base, 'data'),
        'TEMP_DIRECTORY': os.path.join(opt.base, 'tmp'),
        'SMI_PRINT': '1',
        'RESOURCE_COMPUTED': '1',
        'DEVICE_TOTAL': str(opt.slots),
        'CPU_TOTAL': str(os.cpu_count()),
        'CPU_COUNT': str(opt.threads),
        'PATH': shim + os.pathsep + env.get('PATH', ''),
        'PYTHONPATH': os.pathsep.join([os.path.join(opt.out, 'pycompat'), os.path.join(suite, 'milabench')]
                                      + ([env['PYTHONPATH']] if env.get('PYTHONPATH') else [])),
        'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': '1',
        'PARITY_TORCH_COMPAT': '1',
        'PARITY_DEVICE_SLOTS': str(opt.slots),
        'MORE_ARGS': '',
        'PYTHONUNBUFFERED': '1',
    })
    if not opt.drop_caches:
        env['SINGULARITY_NAME'] = 'parity'
    # libtorch's folder on LD_LIBRARY_PATH (for mlbench) would shadow the wheel's own
    # libraries in the suite's Python: the suite side runs without it.
    env.pop('LD_LIBRARY_PATH', None)
    return env


def mlbench_env(env):
    out = dict(env)
    if os.environ.get('LD_LIBRARY_PATH'):
        out['LD_LIBRARY_PATH'] = os.environ['LD_LIBRARY_PATH']
    return out


def run_suite(job, jobs_path, rundir, opt, suite, env):
    os.makedirs(os.path.join(rundir, opt.jobs_name), exist_ok=True)
    cmd = [opt.python, os.path.join(HERE, 'parity_runpy.py'), os.path.join(suite, 'run.py'),
           '--no-cgexec', '--no-nocache', '--jobs', jobs_path, '--outdir', rundir,
           '--uid', str(opt.uid)]
    return timed(cmd, env, suite, rundir, opt.timeout)


def run_mlbench(job, jobs_path, rundir, opt, env):
    devices = 'cpu' if opt.device == 'cpu' else str(opt.slots)
    cmd = [opt.mlbench, 'run', '--jobs', jobs_path, '--name', job['name'], '--devices', devices,
           '--out-dir', rundir, '--first-run', str(opt.uid),
           # No idle baseline: the suite samples none, and it is 30 s of waiting per run.
           '--idle-baseline', '0']
    return timed(cmd, env, rundir, rundir, opt.timeout)


def timed(cmd, env, cwd, rundir, timeout):
    os.makedirs(rundir, exist_ok=True)
    if OPT.cpus:
        cmd = ['taskset', '-c', OPT.cpus] + cmd
    t = time.time()
    with open(os.path.join(rundir, 'stdout.log'), 'w') as out:
        out.write('$ ' + ' '.join(cmd) + '\n')
        out.flush()
        # A session of its own: at the timeout the whole tree goes (run.py, run.sh and the
        # script under them), not only the first process, whose children would run on
        # beside the next measurement.
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = 'timeout'
    return rc, time.time() - t


# ------------------------------------------------------------------------------------------
# Reports

def load_entries(path):
    text = open(path).read()
    try:
        doc = json.loads(text)
        return doc if isinstance(doc, list) else [doc]
    except json.JSONDecodeError:
        pass
    dec, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        while i < len(text) and text[i] in ' \t\r\n,[]':
            i += 1
        if i >= len(text):
            break
        obj, i = dec.raw_decode(text, i)
        out.append(obj)
    return out


def find_entry(rundir, bench):
    """The completed entry of `bench` under rundir (suite or mlbench layout), or None."""
    found = []
    for path in sorted(glob.glob(os.path.join(rundir, '**', '*.json'), recursive=True)):
        if os.path.basename(path) in ('system.json', 'SUBMISSION.json'):
            continue
        try:
            entries = load_entries(path)
        except (ValueError, OSError):
            continue
        for e in entries:
            if isinstance(e, dict) and e.get('name') == bench:
                found.append(e)
    done = [e for e in found if e.get('completed', True) and 'train' in e]
    return (done or found or [None])[-1]


def is_stage(v):
    return isinstance(v, dict) and 'avg' in v and 'unit' in v


def summarize(entry):
    if entry is None:
        return None
    stages = sorted(k for k, v in entry.items() if is_stage(v))
    args = sorted(k for k, v in entry.items()
                  if not is_stage(v) and k not in ('batch_loss', 'epoch_loss', 'metrics'))
    loss = [x for x in entry.get('batch_loss') or [] if isinstance(x, (int, float))]
    item = entry.get('train_item', {}).get('avg') if isinstance(entry.get('train_item'), dict) else None
    return {
        'items_per_s': item,
        'train': entry.get('train'),
        'loss_first': loss[0] if loss else None,
        'loss_last': loss[-1] if loss else None,
        'loss_count': len(loss),
        'epoch_loss': entry.get('epoch_loss') or [],
        'stages': stages,
        'metrics': sorted((entry.get('metrics') or {}).keys()),
        'args': args,
        'values': {k: entry[k] for k in args},
    }


# ------------------------------------------------------------------------------------------
# Table

def fmt_rate(x):
    if x is None:
        return '—'
    for unit, scale in (('M', 1e6), ('k', 1e3)):
        if abs(x) >= scale:
            return f'{x / scale:.3g} {unit}'
    return f'{x:.3g}'


def fmt_num(x):
    if x is None:
        return '—'
    return f'{x:.3g}' if abs(x) >= 1e-3 or x == 0 else f'{x:.1e}'


def span(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return '—'
    lo, hi = min(values), max(values)
    a, b = fmt(lo), fmt(hi)
    return a if a == b else f'{a}–{b}'


def span_rate(values):
    values = [v for v in values if v is not None]
    if not values:
        return '—'
    lo, hi = min(values), max(values)
    if lo >= 1e3 and hi >= 1e3 and fmt_rate(lo)[-1] == fmt_rate(hi)[-1]:
        unit = fmt_rate(lo)[-1]
        scale = 1e6 if unit == 'M' else 1e3
        a, b = f'{lo / scale:.3g}', f'{hi / scale:.3g}'
        return f'{a} {unit}' if a == b else f'{a}–{b} {unit}'
    a, b = fmt_rate(lo), fmt_rate(hi)
    return a if a == b else f'{a}–{b}'


def loss_cell(sides):
    firsts = [s['loss_first'] for s in sides if s]
    lasts = [s['loss_last'] for s in sides if s]
    if not any(x is not None for x in firsts):
        # No batch loss (translator, reso, fast_style log one per observation): the
        # observations' epoch_loss, first → last.
        epochs = [[x for x in s['epoch_loss'] if isinstance(x, (int, float))]
                  for s in sides if s]
        epochs = [e for e in epochs if e]
        if not epochs:
            return '— (no batch_loss)'
        return (f'{span([e[0] for e in epochs], fmt_num)} → '
                f'{span([e[-1] for e in epochs], fmt_num)} (epoch_loss)')
    return f'{span(firsts, fmt_num)} → {span(lasts, fmt_num)}'


def one_side(a, b):
    return sorted(set(a) - set(b))


def build_table(results, opt, meta, skipped, notes):
    lines = []
    lines.append(f'Parity of `mlbench run` with the suite\'s own scripts ({opt.device}), '
                 f'{opt.reps} repetition(s), alternated suite → mlbench bench by bench.')
    lines.append('')
    for k, v in meta.items():
        lines.append(f'- {k}: {v}')
    lines.append('')
    lines.append('| bench | suite, items/s | mlbench, items/s | mlbench ÷ suite | '
                 'suite loss, first → last | mlbench loss, first → last | '
                 'only in the suite\'s report | only in mlbench\'s report |')
    lines.append('|---|---|---|---|---|---|---|---|')
    details = []
    for bench, reps in results.items():
        s = [r['suite'] for r in reps]
        m = [r['mlbench'] for r in reps]
        ratios = [b['items_per_s'] / a['items_per_s'] for a, b in zip(s, m)
                  if a and b and a['items_per_s'] and b['items_per_s']]
        ratio = '—'
        if ratios:
            med = statistics.median(ratios)
            flag = '' if 0.9 <= med <= 1.1 else ' **(outside ±10 %)**'
            ratio = span(ratios, lambda x: f'{x:.2f}') + (f' (median {med:.2f})' if len(ratios) > 1 else '') + flag
        s_ok = [x for x in s if x]
        m_ok = [x for x in m if x]

        def fields(a, b):
            if not a or not b:
                return '—'
            parts = []
            args = one_side(a[0]['args'], b[0]['args'])
            if args:
                parts.append('args: ' + ', '.join(f'`{x}`' for x in args))
            st = one_side(a[0]['stages'], b[0]['stages'])
            if st:
                parts.append('stages: ' + ', '.join(f'`{x}`' for x in st))
            mt = one_side(a[0]['metrics'], b[0]['metrics'])
            if mt:
                parts.append('metrics: ' + ', '.join(f'`{x}`' for x in mt))
            if a[0]['epoch_loss'] and not b[0]['epoch_loss']:
                parts.append('`epoch_loss` values')
            if a[0]['loss_count'] and not b[0]['loss_count']:
                parts.append('`batch_loss` values')
            return '; '.join(parts) or 'none'

        fail = []
        for side, xs in (('suite', s), ('mlbench', m)):
            bad = [r for r in reps if not r[side]]
            if bad:
                fail.append(f'{side} failed in {len(bad)}/{len(reps)} (rc {bad[0][side + "_rc"]}, '
                            f'log {bad[0][side + "_dir"]}/stdout.log)')
        name = bench + (' ¹' if bench in notes else '')
        lines.append(f'| {name} | {span_rate([x["items_per_s"] for x in s_ok])} | '
                     f'{span_rate([x["items_per_s"] for x in m_ok])} | {ratio} | '
                     f'{loss_cell(s_ok)} | {loss_cell(m_ok)} | {fields(s_ok, m_ok)} | '
                     f'{fields(m_ok, s_ok)} |')
        if fail:
            details.append(f'- {bench}: ' + '; '.join(fail))
        if s_ok and m_ok:
            a, b = s_ok[0]['values'], m_ok[0]['values']
            diff = [f'`{k}` {json.dumps(a[k])} vs {json.dumps(b[k])}' for k in sorted(set(a) & set(b))
                    if k not in ALWAYS_DIFFER and a[k] != b[k]]
            if diff:
                details.append(f'- {bench}: values that differ (suite vs mlbench): ' + ', '.join(diff))
            counts = f'batch_loss values: suite {s_ok[0]["loss_count"]} (a ring of the last 100), ' \
                     f'mlbench {m_ok[0]["loss_count"]}'
            details.append(f'- {bench}: {counts}; wall time per run: suite '
                           f'{span([r["suite_wall"] for r in reps], lambda x: f"{x:.0f}")} s, mlbench '
                           f'{span([r["mlbench_wall"] for r in reps], lambda x: f"{x:.0f}")} s')
    lines.append('')
    if notes:
        lines.append('¹ Data: ' + '; '.join(f'{b}: {n}' for b, n in notes.items()) + '.')
        lines.append('')
    if details:
        lines.append('Details:')
        lines.extend(details)
        lines.append('')
    if skipped:
        lines.append('Not run here:')
        lines.append('')
        lines.append('| bench | why |')
        lines.append('|---|---|')
        for b, why in skipped.items():
            lines.append(f'| {b} | {why} |')
        lines.append('')
    return '\n'.join(lines)


# ------------------------------------------------------------------------------------------

def probe_python(py):
    code = ('import json, importlib.util as u\n'
            'r = {}\n'
            'try:\n import torch; r["torch"] = torch.__version__; r["cuda"] = torch.cuda.is_available()\n'
            'except Exception as e: r["error"] = repr(e)\n'
            'try:\n import torchvision; r["torchvision"] = torchvision.__version__\n'
            'except Exception as e: r["torchvision_error"] = repr(e)\n'
            'r["modules"] = {m: u.find_spec(m) is not None for m in '
            '["apex", "gym", "a2c_ppo_acktr", "mlperf_compliance", "scipy", "numpy", "PIL", "tqdm", "git"]}\n'
            'import sys; r["python"] = sys.version.split()[0]\n'
            'print(json.dumps(r))\n')
    r = sh([py, '-c', code], env={k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'})
    if r.returncode:
        return {'error': r.stderr.strip()[-500:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def why_not(bench, probe, opt):
    need = NEEDS.get(bench)
    if need is None:
        return 'unknown job: no entry in the harness\'s NEEDS table'
    reasons = []
    if 'cuda' in need and opt.device == 'cpu':
        reasons.append('CUDA only: ' + need['cuda'])
    missing = [m for m in need.get('modules', []) if not probe['modules'].get(m)]
    if missing:
        reasons.append('Python module(s) not installed: ' + ', '.join(missing))
    if 'download' in need:
        reasons.append('needs ' + need['download'])
    return '; '.join(reasons)


OPT = None


def cpu_list(text):
    out = set()
    for part in text.split(','):
        a, _, b = part.partition('-')
        out.update(range(int(a), int(b or a) + 1))
    return sorted(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('suite', help='checkout of mila-iqia/training (read only: copied to OUT)')
    p.add_argument('--python', default=os.environ.get('PARITY_PYTHON', 'python3'),
                   help='Python with torch for the suite\'s scripts (default $PARITY_PYTHON or python3)')
    p.add_argument('--mlbench', default=os.environ.get('MLBENCH', 'mlbench'),
                   help='mlbench binary built with --features runner (default $MLBENCH or mlbench)')
    p.add_argument('--jobs', default=os.path.join(REPO, 'baselines', 'jobs', 'fast.json'))
    p.add_argument('--bench', nargs='*', default=[], help='jobs to run (default: every job)')
    p.add_argument('--reps', type=int, default=3)
    p.add_argument('--out', default=None, help='output folder (default ./parity-out-<time>)')
    p.add_argument('--device', choices=['cpu', 'cuda'], default='cpu')
    p.add_argument('--repeat', type=int, help='override --repeat of every job (both sides); '
                   'keep it >= 12: the suite drops its first 10 observations')
    p.add_argument('--number', type=int, help='override --number of every job (both sides)')
    p.add_argument('--batch-size', type=int, help='override --batch-size where the job has one')
    p.add_argument('--set', action='append', default=[], metavar='BENCH:FLAG=VALUE',
                   help='set a flag of one job on both sides, e.g. convnet:--arch=resnet18 '
                        '(BENCH:FLAG= removes it); repeatable')
    p.add_argument('--cpus', default=None, metavar='LIST',
                   help='run both sides under `taskset -c LIST` (e.g. 0 or 0-3): mlbench '
                        '--devices cpu then uses those cores, and the suite\'s CPU_COUNT is '
                        'their number unless --threads says otherwise')
    p.add_argument('--threads', type=int, default=None,
                   help='CPU_COUNT of the suite side (mlbench --devices cpu uses every core '
                        'it may run on); default: every core, or the --cpus count')
    p.add_argument('--uid', type=int, default=0, help='RUN_ID of both sides (seeds follow it)')
    p.add_argument('--timeout', type=int, default=3600, help='seconds per side and repetition')
    p.add_argument('--drop-caches', action='store_true',
                   help='let config.env drop the page cache before each suite script, as the '
                        'suite does (needs root; disturbs other work on the machine)')
    p.add_argument('--wlm-eval-lines', type=int, default=0, metavar='N',
                   help='cut wikitext-2 valid.txt and test.txt (in the suite copy) to N lines: '
                        'wlm\'s full validation pass after every observation takes minutes '
                        'on a CPU; the timed `train` stage is unchanged')
    p.add_argument('--base', default=None,
                   help='BASE of the suite (data under BASE/data, made once and reused); '
                        'default OUT/base')
    p.add_argument('--fake-images', type=int, default=None,
                   help='fake ImageNet size (default: enough for the selected jobs, >= 1024)')
    p.add_argument('--mlbench-commit', default=os.environ.get('MLBENCH_COMMIT', ''),
                   help='commit the mlbench binary was built from, for the table')
    p.add_argument('--list', action='store_true', help='say which jobs can run here, run nothing')
    opt = p.parse_args()

    opt.slots = 1
    global OPT
    OPT = opt
    if opt.threads is None:
        opt.threads = len(cpu_list(opt.cpus)) if opt.cpus else os.cpu_count()
    opt.out = os.path.abspath(opt.out or f'parity-out-{datetime.datetime.utcnow():%Y%m%d-%H%M%S}')
    opt.base = os.path.abspath(opt.base or os.path.join(opt.out, 'base'))
    opt.jobs_name = os.path.basename(opt.jobs).split('.')[0]
    opt.python = shutil.which(opt.python) or opt.python
    suite_src = os.path.abspath(opt.suite)
    if not os.path.exists(os.path.join(suite_src, 'run.py')):
        sys.exit(f'{suite_src}: no run.py: not a mila-iqia/training checkout')

    probe = probe_python(opt.python)
    if 'torch' not in probe:
        sys.exit(f'{opt.python}: cannot import torch: {probe.get("error")}')
    if opt.device == 'cuda' and not probe.get('cuda'):
        sys.exit(f'{opt.python}: torch sees no CUDA device')

    jobs = json.load(open(opt.jobs))
    names = [j['name'] for j in jobs]
    unknown = [b for b in opt.bench if b not in names]
    if unknown:
        sys.exit(f'not in {opt.jobs}: {", ".join(unknown)} (jobs: {", ".join(names)})')
    selected = [j for j in jobs if not opt.bench or j['name'] in opt.bench]

    skipped, runnable = {}, []
    for job in selected:
        why = why_not(job['name'], probe, opt)
        if why:
            skipped[job['name']] = why
        else:
            runnable.append(derive_job(job, opt))
    for b, why in skipped.items():
        log(f'{b}: not run: {why}')
    if opt.list:
        for job in runnable:
            log(f'{job["name"]}: runs ({NEEDS[job["name"]].get("data", "no data")})')
        return

    mlbench = shutil.which(opt.mlbench) or opt.mlbench
    if not os.access(mlbench, os.X_OK):
        sys.exit(f'{opt.mlbench}: no mlbench binary (give --mlbench or $MLBENCH)')
    opt.mlbench = os.path.abspath(mlbench)

    os.makedirs(opt.out, exist_ok=True)
    suite = os.path.join(opt.out, 'suite')
    if not os.path.exists(os.path.join(suite, 'run.py')):
        log(f'copying {suite_src} to {suite} (the checkout stays untouched)')
        shutil.copytree(suite_src, suite, symlinks=True, ignore=shutil.ignore_patterns('.git'))
    shim = os.path.join(opt.out, 'bin')
    os.makedirs(shim, exist_ok=True)
    with open(os.path.join(shim, 'python'), 'w') as f:
        f.write(f'#!/bin/sh\nexec "{opt.python}" "$@"\n')
    os.chmod(os.path.join(shim, 'python'), 0o755)
    write_pycompat(opt)
    env = suite_env(opt, suite, shim)
    for d in ('data', 'tmp', 'output'):
        os.makedirs(os.path.join(opt.base, d), exist_ok=True)

    # Data, once for all repetitions.
    notes = {}
    fake_n = opt.fake_images or max([1024] + [images_needed(j) for j in runnable
                                              if NEEDS[j['name']].get('data') == 'imagenet'])
    for job in list(runnable):
        kind = NEEDS[job['name']].get('data')
        if not kind:
            continue
        try:
            notes[job['name']] = make_data(kind, opt, env, suite, fake_n)
        except Exception as e:  # noqa: BLE001 - reported in the table
            skipped[job['name']] = f'data could not be made: {e}'
            runnable.remove(job)
            log(f'{job["name"]}: not run: {e}')

    # Jobs files: one per bench and side, named like the original (SUITE_NAME = its stem).
    paths = {}
    for job in runnable:
        d = os.path.join(opt.out, 'jobs', job['name'])
        os.makedirs(os.path.join(d, 'suite'), exist_ok=True)
        m = os.path.join(d, opt.jobs_name + '.json')
        s = os.path.join(d, 'suite', opt.jobs_name + '.json')
        # mlbench's copy is the job as given (wlm evaluates what valid.txt holds, on both
        # sides: with --wlm-eval-lines, the cut file BASE/data/wikitext-2 links to).
        json.dump([job], open(m, 'w'), indent=2)
        json.dump([suite_side_job(job, opt)], open(s, 'w'), indent=2)
        paths[job['name']] = (s, m)

    mlbench_version = (sh([opt.mlbench, '--version'], env=mlbench_env(env)).stdout.strip().splitlines() or ['?'])[0]
    suite_commit = sh(['git', '-C', suite_src, 'rev-parse', '--short', 'HEAD']).stdout.strip() or '?'
    load_before = open('/proc/loadavg').read().split()[:3] if os.path.exists('/proc/loadavg') else []
    started = datetime.datetime.utcnow()

    results = {job['name']: [] for job in runnable}
    raw_path = os.path.join(opt.out, 'parity.json')
    for rep in range(opt.reps):
        for job in runnable:
            b = job['name']
            s_path, m_path = paths[b]
            row = {'rep': rep}
            for side in ('suite', 'mlbench'):
                rundir = os.path.join(opt.out, 'runs', b, f'rep{rep}', side)
                shutil.rmtree(rundir, ignore_errors=True)
                os.makedirs(rundir)
                load = open('/proc/loadavg').read().split()[0]
                log(f'rep {rep + 1}/{opt.reps} {b}: {side} (load {load})')
                if side == 'suite':
                    rc, wall = run_suite(job, s_path, rundir, opt, suite, env)
                else:
                    rc, wall = run_mlbench(job, m_path, rundir, opt, mlbench_env(env))
                entry = find_entry(rundir, b)
                summary = summarize(entry) if entry and 'train' in entry else None
                row.update({side: summary, f'{side}_rc': rc, f'{side}_wall': wall,
                            f'{side}_dir': os.path.relpath(rundir, opt.out), f'{side}_load': load})
                got = fmt_rate(summary['items_per_s']) if summary else 'no report'
                log(f'    rc {rc}, {wall:.0f} s, {got} items/s')
            results[b].append(row)
            json.dump({'results': results, 'skipped': skipped, 'notes': notes}, open(raw_path, 'w'),
                      indent=1, default=str)

    load_after = open('/proc/loadavg').read().split()[:3] if os.path.exists('/proc/loadavg') else []
    cpu = ''
    if os.path.exists('/proc/cpuinfo'):
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    libtorch = ''
    lt = os.environ.get('LIBTORCH')
    if lt and os.path.exists(os.path.join(lt, 'build-version')):
        libtorch = open(os.path.join(lt, 'build-version')).read().strip()
    overrides = ', '.join(x for x in [
        f'--repeat {opt.repeat}' if opt.repeat is not None else '',
        f'--number {opt.number}' if opt.number is not None else '',
        f'--batch-size {opt.batch_size}' if opt.batch_size is not None else ''] + opt.set if x)
    meta = {
        'date (UTC)': f'{started:%Y-%m-%d %H:%M} → {datetime.datetime.utcnow():%H:%M}',
        'machine': f'{platform.node()}, {cpu}, {os.cpu_count()} cores'
                   + (f', both sides pinned to CPU(s) {opt.cpus} (taskset)' if opt.cpus else '')
                   + f'; suite CPU_COUNT {opt.threads}, mlbench --devices '
                   f'{"cpu" if opt.device == "cpu" else opt.slots}',
        'load average (1, 5, 15 min) before → after': f'{" ".join(load_before)} → {" ".join(load_after)}',
        'suite': f'mila-iqia/training {suite_commit}, Python {probe.get("python")}, torch '
                 f'{probe.get("torch")}, torchvision {probe.get("torchvision", "—")}',
        'mlbench': f'{mlbench_version}{" (" + opt.mlbench_commit + ")" if opt.mlbench_commit else ""}'
                   f', libtorch {libtorch or "?"}',
        'jobs': f'{opt.jobs} (RUN_ID {opt.uid}: seed {opt.uid + 100} for per-GPU jobs, '
                f'{opt.uid + opt.slots} for whole-machine jobs)'
                + (f'; overrides on both sides: {overrides}' if overrides else '; sizes as in the file'),
        'raw': f'{raw_path}; each run\'s folder and log under {os.path.join(opt.out, "runs")}',
    }
    table = build_table(results, opt, meta, skipped, notes)
    with open(os.path.join(opt.out, 'PARITY.md'), 'w') as f:
        f.write(table + '\n')
    json.dump({'meta': meta, 'results': results, 'skipped': skipped, 'notes': notes},
              open(raw_path, 'w'), indent=1, default=str)
    print(table)


if __name__ == '__main__':
    main()
