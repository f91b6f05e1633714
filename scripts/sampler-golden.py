#!/usr/bin/env python3
"""The order translator's BucketingSampler gives, computed with torch by the suite's own
algorithm (natural_language_processing/rnn_translator/pytorch/seq2seq/data/sampler.py,
`__iter__` at world size 1, rank 0, epoch 0), for the cases the runner's test
`models::translator::tests::the_sampler_orders_as_the_scripts_does` checks.

    python3 scripts/sampler-golden.py     # needs torch (2.13.0, the runner's libtorch)

Prints, per case, the first 24 indices, the last 6 and sum(k * order[k]).
"""
import torch


def bucketing_order(lengths, batch_size, bucket):
    # sampler.py, BucketingSampler.__iter__ with world_size 1, rank 0 and epoch 0.
    g = torch.Generator()
    g.manual_seed(0)
    data_len = len(lengths)
    num_samples = data_len // batch_size * batch_size
    indices = torch.randperm(data_len, generator=g)
    indices = indices[:num_samples]
    if bucket:
        batches_in_shard = 80
        shard_size = batch_size * batches_in_shard
        nshards = (num_samples + shard_size - 1) // shard_size
        lengths = lengths[indices]
        shards = [indices[i * shard_size:(i + 1) * shard_size] for i in range(nshards)]
        len_shards = [lengths[i * shard_size:(i + 1) * shard_size] for i in range(nshards)]
        indices = []
        for len_shard in len_shards:
            _, ind = len_shard.sort()
            indices.append(ind)
        output = tuple(shard[idx] for shard, idx in zip(shards, indices))
        indices = torch.cat(output)
        indices = indices.view(-1, batch_size)
        order = torch.randperm(indices.shape[0], generator=g)
        indices = indices[order, :]
        indices = indices.view(-1)
    return indices.tolist()


def lengths_of_case(n):
    # Pair lengths (source + target ids) with many ties, as real pairs have.
    return torch.tensor([(i * 7919) % 23 + 4 for i in range(n)])


for n, batch, bucket in [(500, 3, True), (500, 3, False), (7, 2, True)]:
    order = bucketing_order(lengths_of_case(n), batch, bucket)
    weighted = sum(k * i for k, i in enumerate(order))
    print(f"n={n} batch={batch} bucket={bucket} len={len(order)}")
    print("  first:", order[:24])
    print("  last:", order[-6:])
    print("  sum k*order[k]:", weighted)
