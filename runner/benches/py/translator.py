"""translator (runner/src/models/translator.rs): MLPerf's GNMT
(natural_language_processing/rnn_translator/pytorch train.py) as its default
`--model-config` builds it, in the seq2seq package's own style: time-first nn.LSTMs, the
bidirectional encoder layer on packed sequences (`pack_padded_sequence` /
`pad_packed_sequence`), normalised Bahdanau attention with the pads masked at -65504, a
classifier H -> vocab, the script's `LabelSmoothing` loss, Adam, `clip_grad_norm_`.

- Encoder: embedding, bidirectional LSTM H -> 2H (packed), dropout, LSTM 2H -> H, then
  LSTMs H -> H with dropout before and a residual connection around each.
- Decoder (gnmt_v2): embedding of tgt[:-1], an LSTM H -> H whose outputs query the
  attention over the encoder's outputs, then `num_layers - 1` LSTMs over
  [dropout(x) || attention] 2H -> H, residual from the second, and the classifier.
- Loss: 0.9 NLL + 0.1 mean(-log p) over the non-pad targets of tgt[1:], summed, / the
  batch's sentences; Adam (lr 5e-4); gradient norm clipped to 5; gradients zeroed.

The work per `step()` is the tch model's (its `schedule`): the first step of each
observation of `--number` steps first runs `Seq2SeqTrainer.preallocate` (a batch of
`max_length_train` x batch tokens of id 4, forward and backward, no update), and the last
runs two batches, so an observation is the trainer's `number + 1` batches. Items are
sentences (`batch_size` a step), observations `repeat`, as the Rust harness counts them.

Data as the tch model makes it: one shard of the script's `BucketingSampler` (80 batches)
of synthetic pairs, lengths (BOS and EOS included) uniform in
max(2, min_length_train)..=max_length_train, words uniform in [4, vocab), the pairs sorted
by source + target length, cut into batches whose order is shuffled, each batch sorted by
source length (longest first) and padded to its longest; steps cycle through the shard.
Vocabulary 32317 (WMT16's BPE vocabulary and the 4 special tokens). The layers are built
and the shard drawn in the tch model's order with the same tensor sizes (libtorch's CPU
generator spends the same draws on them), so with the same seed the two sides should
train on the same shard (by construction; not checked bit for bit).

Deliberate differences from the script, all shared with the tch model: the decoder's
dropout covers the LSTM output only, not the concatenated attention (the tch model's
layout; the same matmuls); nn.Embedding / nn.Linear / nn.LSTM default initialisations
instead of the script's uniform(-0.1, 0.1) (no effect on cost); no data loader, validation
or `torch.cuda.empty_cache()`.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, UNK, BOS, EOS = 0, 1, 2, 3
FIRST_WORD = 4
SHARD_BATCHES = 80


def add_arguments(p):
    # The script's dicts, e.g. "{'hidden_size': 1024, 'num_layers': 4}" (one word, or the
    # words a jobs file's shell splitting makes of it).
    p.add_argument("--model-config", nargs="+", default=None)
    p.add_argument("--optimization-config", nargs="+", default=None)
    # Bare sizes, for test sizes (a bare one wins over the dict, as in the tch model).
    p.add_argument("--hidden-size", type=int, default=None)
    p.add_argument("--num-layers", type=int, default=None)
    p.add_argument("--dropout", type=float, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--vocab-size", type=int, default=32317)
    p.add_argument("--max-length-train", type=int, default=50)
    p.add_argument("--min-length-train", type=int, default=0)
    p.add_argument("--smoothing", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=5.0)
    p.add_argument("--no-bucketing", action="store_true")
    p.add_argument("--math", default="fp32", choices=["fp32"])


def items(a):
    return a.batch_size


def observations(a):
    return a.repeat


def py_dict(words):
    """The pairs of a Python dict literal, quotes optional (as the tch model reads it)."""
    text = " ".join(words).strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise SystemExit(f"not a dict: {text}")
    out = {}
    for item in filter(str.strip, text[1:-1].split(",")):
        key, _, value = item.partition(":")
        key, value = (w.strip().strip("'\"").strip() for w in (key, value))
        if value in ("True", "False"):
            out[key] = value == "True"
        else:
            try:
                out[key] = int(value)
            except ValueError:
                try:
                    out[key] = float(value)
                except ValueError:
                    out[key] = value
    return out


def settings(a):
    """hidden, layers, dropout, share_embedding, bias, lr from the dicts and bare flags."""
    model = {"hidden_size": 1024, "num_layers": 4, "dropout": 0.2,
             "share_embedding": True, "bias": True}
    if a.model_config:
        given = py_dict(a.model_config)
        given.pop("batch_first", None)  # only the layout
        unknown = set(given) - set(model)
        if unknown:
            raise SystemExit(f"--model-config: GNMT takes no {sorted(unknown)}")
        model.update(given)
    lr = 5e-4
    if a.optimization_config:
        opt = py_dict(a.optimization_config)
        if opt.get("optimizer", "Adam") != "Adam":
            raise SystemExit("--optimization-config: only Adam is implemented")
        lr = float(opt.get("lr", lr))
    for key in ("hidden_size", "num_layers", "dropout"):
        if getattr(a, key) is not None:
            model[key] = getattr(a, key)
    if a.lr is not None:
        lr = a.lr
    if model["num_layers"] < 2:
        raise SystemExit("--num-layers: at least 2")
    return model, lr


class BahdanauAttention(nn.Module):
    """seq2seq/models/attention.py's BahdanauAttention(normalize=True), time first."""

    def __init__(self, h):
        super().__init__()
        self.linear_q = nn.Linear(h, h, bias=False)
        self.linear_k = nn.Linear(h, h, bias=False)
        stdv = 1.0 / h ** 0.5
        self.linear_att = nn.Parameter(torch.empty(h).uniform_(-stdv, stdv))
        self.normalize_scalar = nn.Parameter(torch.full((1,), stdv))
        self.normalize_bias = nn.Parameter(torch.zeros(h))

    def calc_score(self, att_query, att_keys):
        b, t_k, n = att_keys.size()
        t_q = att_query.size(1)
        att_query = att_query.unsqueeze(2).expand(b, t_q, t_k, n)
        att_keys = att_keys.unsqueeze(1).expand(b, t_q, t_k, n)
        sum_qk = att_query + att_keys + self.normalize_bias
        linear_att = self.linear_att / self.linear_att.norm() * self.normalize_scalar
        return torch.tanh(sum_qk).matmul(linear_att)

    def forward(self, query, keys, mask):
        """query [Tq, B, H], keys [Tk, B, H], mask [B, Tk] (True at pads) -> [Tq, B, H]."""
        keys = keys.transpose(0, 1)
        query = query.transpose(0, 1)
        scores = self.calc_score(self.linear_q(query), self.linear_k(keys))
        scores = scores.masked_fill(mask.unsqueeze(1), -65504.0)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys).transpose(0, 1)


class Encoder(nn.Module):
    """ResidualRecurrentEncoder."""

    def __init__(self, h, layers, dropout, bias, embedder):
        super().__init__()
        self.rnn_layers = nn.ModuleList(
            [nn.LSTM(h, h, num_layers=1, bias=bias, bidirectional=True),
             nn.LSTM(2 * h, h, num_layers=1, bias=bias)]
            + [nn.LSTM(h, h, num_layers=1, bias=bias) for _ in range(layers - 2)]
        )
        self.dropout = nn.Dropout(dropout)
        self.embedder = embedder

    def forward(self, inputs, lengths):
        x = self.embedder(inputs)
        x = pack_padded_sequence(x, lengths)
        x, _ = self.rnn_layers[0](x)
        x, _ = pad_packed_sequence(x)
        x = self.dropout(x)
        x, _ = self.rnn_layers[1](x)
        for rnn in self.rnn_layers[2:]:
            residual = x
            x, _ = rnn(self.dropout(x))
            x = x + residual
        return x


class Decoder(nn.Module):
    """ResidualRecurrentDecoder (gnmt_v2 attention)."""

    def __init__(self, h, vocab, layers, dropout, bias, embedder):
        super().__init__()
        self.embedder = embedder
        self.att_rnn = nn.LSTM(h, h, num_layers=1, bias=bias)
        self.attn = BahdanauAttention(h)
        self.rnn_layers = nn.ModuleList(
            [nn.LSTM(2 * h, h, num_layers=1, bias=bias) for _ in range(layers - 1)]
        )
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(h, vocab)

    def forward(self, inputs, context, mask):
        x = self.embedder(inputs)
        x, _ = self.att_rnn(x)
        attn = self.attn(x, context, mask)
        x, _ = self.rnn_layers[0](torch.cat((self.dropout(x), attn), dim=2))
        for rnn in self.rnn_layers[1:]:
            residual = x
            x, _ = rnn(torch.cat((self.dropout(x), attn), dim=2))
            x = x + residual
        return self.classifier(x)


class GNMT(nn.Module):
    def __init__(self, vocab, hidden_size, num_layers, dropout, share_embedding, bias):
        super().__init__()
        enc_embedder = nn.Embedding(vocab, hidden_size, padding_idx=PAD)
        dec_embedder = (enc_embedder if share_embedding
                        else nn.Embedding(vocab, hidden_size, padding_idx=PAD))
        self.encoder = Encoder(hidden_size, num_layers, dropout, bias, enc_embedder)
        self.decoder = Decoder(hidden_size, vocab, num_layers, dropout, bias, dec_embedder)

    def forward(self, src, src_len, tgt):
        context = self.encoder(src, src_len)
        # The attention's mask (AttentionMask.set_mask): True past each source's length.
        mask = torch.arange(src.size(0)).unsqueeze(0) >= src_len.unsqueeze(1)
        return self.decoder(tgt, context, mask)


class LabelSmoothing(nn.Module):
    """seq2seq/train/smoothing.py."""

    def __init__(self, padding_idx, smoothing):
        super().__init__()
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing

    def forward(self, x, target):
        logprobs = F.log_softmax(x, dim=-1, dtype=torch.float32)
        non_pad_mask = target != self.padding_idx
        nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
        nll_loss = nll_loss.squeeze(1)[non_pad_mask]
        smooth_loss = -logprobs.mean(dim=-1)[non_pad_mask]
        loss = self.confidence * nll_loss + self.smoothing * smooth_loss
        return loss.sum()


def sentences(lengths, vocab):
    """BOS, random words, EOS, then PAD, time first: [max(lengths), len(lengths)]."""
    longest = max(lengths)
    length = torch.tensor(lengths).unsqueeze(0)
    pos = torch.arange(longest).unsqueeze(1)
    return (torch.randint(FIRST_WORD, vocab, (longest, len(lengths)))
            .masked_fill(pos == 0, BOS)
            .masked_fill(pos == length - 1, EOS)
            .masked_fill(pos >= length, PAD))


def collate(pairs, vocab):
    """The collate function: sorted by source length, longest first, each side padded."""
    pairs = sorted(pairs, key=lambda p: p[0], reverse=True)
    src_len = [s for s, _ in pairs]
    tgt_len = [t for _, t in pairs]
    return sentences(src_len, vocab), torch.tensor(src_len), sentences(tgt_len, vocab)


def shard(batch, vocab, min_len, max_len, bucketing):
    n = SHARD_BATCHES * batch
    src = torch.randint(max(2, min_len), max_len + 1, (n,)).tolist()
    tgt = torch.randint(max(2, min_len), max_len + 1, (n,)).tolist()
    pairs = list(zip(src, tgt))
    if bucketing:
        pairs.sort(key=lambda p: p[0] + p[1])
    order = torch.randperm(SHARD_BATCHES).tolist()
    return [collate(pairs[i * batch:(i + 1) * batch], vocab) for i in order]


class Translator:
    def __init__(self, a):
        if a.max_length_train < max(2, a.min_length_train):
            raise SystemExit("--max-length-train: at least 2 and --min-length-train")
        cfg, lr = settings(a)
        self.model = GNMT(a.vocab_size, cfg["hidden_size"], cfg["num_layers"],
                          cfg["dropout"], cfg["share_embedding"], cfg["bias"])
        self.model.train()
        self.criterion = LabelSmoothing(PAD, a.smoothing)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.grad_clip = a.grad_clip
        self.number = max(1, a.number)
        self.shard = shard(a.batch_size, a.vocab_size, a.min_length_train,
                           a.max_length_train, not a.no_bucketing)
        full = torch.full((a.max_length_train, a.batch_size), FIRST_WORD, dtype=torch.int64)
        self.preallocation = (full, torch.full((a.batch_size,), a.max_length_train), full)
        self.steps = 0
        self.cursor = 0

    def iterate(self, batch, update=True):
        """Seq2SeqTrainer.iterate with Fp32Optimizer.step."""
        src, src_len, tgt = batch
        output = self.model(src, src_len, tgt[:-1])
        t, b = output.size(0), output.size(1)
        loss = self.criterion(output.view(t * b, -1).float(), tgt[1:].contiguous().view(-1))
        loss_per_batch = loss.item()
        loss = loss / b
        loss.backward()
        if self.grad_clip != float("inf"):
            clip_grad_norm_(self.model.parameters(), self.grad_clip)
        if update:
            self.opt.step()
        self.opt.zero_grad()
        return loss_per_batch / b

    def next_batch(self):
        batch = self.shard[self.cursor % len(self.shard)]
        self.cursor += 1
        return self.iterate(batch)

    def step(self):
        within = self.steps % self.number
        self.steps += 1
        if within == 0:
            self.iterate(self.preallocation, update=False)
        loss = self.next_batch()
        if within == self.number - 1:
            loss = self.next_batch()
        return loss


def build(a):
    return Translator(a)
