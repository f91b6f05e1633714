//! nn.DataParallel's communication on c10d, for replicas stepped by the threads of one
//! process, each holding its rank's group of [`ProcessGroup::gloo_world_here`] (rank 0: the
//! master, the replica the optimizer steps).
//!
//! DataParallel replicates the master before every forward (`Broadcast`, which calls
//! `torch.cuda.comm.broadcast_coalesced`) and, in backward, sums the replicas' gradients
//! into the master's (`ReduceAddCoalesced`, `comm.reduce_add_coalesced`). Both flatten the
//! tensors of one dtype into buffers of at most 10 MiB first; here each buffer then goes
//! through c10d's broadcast or reduce. Scatter and gather, DataParallel's other two moves,
//! are device copies in PyTorch too (`comm.scatter`, `comm.gather`): they stay tensor
//! copies (`models::parallel`).
use tch::{Kind, Tensor};

use crate::c10d::{C10dError, ProcessGroup};
use crate::ddp::{flatten, per_dtype, unflatten_into};

/// `comm.broadcast_coalesced`'s and `comm.reduce_add_coalesced`'s `buffer_size`: 10 MiB.
pub const BUFFER_BYTES: usize = 10 << 20;

/// The tensors' indices grouped as torch's `take_tensors` groups them for a coalesced
/// collective: one open group per dtype, filled in order, closed once it holds `cap` bytes
/// or more; closed groups in the order they closed, then the open ones.
pub fn coalesced(tensors: &[(usize, Kind)], cap: usize) -> Vec<Vec<usize>> {
    per_dtype(tensors, 0..tensors.len(), cap, cap)
}

fn shapes(tensors: &[Tensor]) -> Vec<(usize, Kind)> {
    tensors.iter().map(|t| (t.numel(), t.kind())).collect()
}

/// DataParallel's replication: rank 0's `tensors` (a module's parameters and buffers, in the
/// same order on every rank) copied into every rank's, in coalesced buffers.
pub fn broadcast_coalesced(group: &mut ProcessGroup, tensors: &[Tensor]) -> Result<(), C10dError> {
    broadcast_coalesced_with(group, tensors, BUFFER_BYTES)
}

/// [`broadcast_coalesced`] with buffers of `cap` bytes.
pub fn broadcast_coalesced_with(
    group: &mut ProcessGroup,
    tensors: &[Tensor],
    cap: usize,
) -> Result<(), C10dError> {
    for bucket in coalesced(&shapes(tensors), cap) {
        let members: Vec<Tensor> = bucket.iter().map(|&i| tensors[i].detach()).collect();
        let mut flat = flatten(&members);
        group.broadcast(&mut flat, 0)?;
        if group.rank() != 0 {
            tch::no_grad(|| unflatten_into(&flat, &members));
        }
    }
    Ok(())
}

/// DataParallel's gradient reduction: every rank's gradients of `params` summed into rank
/// 0's (the master's, which keeps what it had accumulated), in coalesced buffers; the other
/// ranks' gradients are then zeroed, as a fresh replica's would be. Every parameter must
/// have a gradient on every rank.
pub fn reduce_add_coalesced(group: &mut ProcessGroup, params: &[Tensor]) -> Result<(), C10dError> {
    reduce_add_coalesced_with(group, params, BUFFER_BYTES)
}

/// [`reduce_add_coalesced`] with buffers of `cap` bytes.
pub fn reduce_add_coalesced_with(
    group: &mut ProcessGroup,
    params: &[Tensor],
    cap: usize,
) -> Result<(), C10dError> {
    let mut grads = Vec::with_capacity(params.len());
    for (i, p) in params.iter().enumerate() {
        let g = p.grad();
        if !g.defined() {
            return Err(C10dError {
                operation: "reduce",
                message: format!("parameter {i} has no gradient on rank {}", group.rank()),
            });
        }
        grads.push(g);
    }
    for bucket in coalesced(&shapes(&grads), cap) {
        let members: Vec<Tensor> = bucket.iter().map(|&i| grads[i].shallow_clone()).collect();
        let mut flat = flatten(&members);
        group.reduce_sum(&mut flat, 0)?;
        tch::no_grad(|| {
            if group.rank() == 0 {
                unflatten_into(&flat, &members);
            } else {
                for g in &members {
                    let _ = g.shallow_clone().zero_();
                }
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tch::Device;

    const F: Kind = Kind::Float;

    #[test]
    fn groups_are_per_dtype_in_order_and_close_at_the_cap() {
        // Floats of 4 bytes, a cap of 40 bytes: 3 + 5 (32 B) + 4 → 48 B closes [0, 1, 2];
        // then 10 (40 B) closes [3] alone; 2 + 6 stay open.
        let ts = [(3, F), (5, F), (4, F), (10, F), (2, F), (6, F)];
        assert_eq!(coalesced(&ts, 40), vec![vec![0, 1, 2], vec![3], vec![4, 5]]);
        // One open group per dtype; open ones in the order their dtypes came.
        let mixed = [(1, F), (1, Kind::Double), (1, F), (20, Kind::Double)];
        assert_eq!(coalesced(&mixed, 40), vec![vec![1, 3], vec![0, 2]]);
        assert!(coalesced(&[], 8).is_empty());
    }

    /// Rank r's tensors: values `(r + 1) · (1, 2, …)`, of mixed shapes and dtypes.
    fn tensors_of(rank: usize) -> Vec<Tensor> {
        let shapes: [(&[i64], Kind); 4] = [
            (&[2, 3], F),
            (&[4], Kind::Double),
            (&[5], F),
            (&[1, 2], Kind::Double),
        ];
        shapes
            .iter()
            .map(|&(shape, kind)| {
                let n: i64 = shape.iter().product();
                (Tensor::arange_start(1, n + 1, (kind, Device::Cpu)) * (rank + 1) as f64)
                    .view(shape)
                    .set_requires_grad(true)
            })
            .collect()
    }

    fn values(t: &Tensor) -> Vec<f64> {
        Vec::<f64>::try_from(t.to_kind(Kind::Double).reshape([-1])).unwrap()
    }

    /// Runs `f(rank, group)` on every rank of a world of `n` in this process.
    fn on_world<T: Send>(n: usize, f: impl Fn(usize, &mut ProcessGroup) -> T + Sync) -> Vec<T> {
        let groups = ProcessGroup::gloo_world_here(n, Duration::from_secs(30)).unwrap();
        std::thread::scope(|scope| {
            let f = &f;
            let joins: Vec<_> = groups
                .into_iter()
                .enumerate()
                .map(|(rank, mut g)| scope.spawn(move || f(rank, &mut g)))
                .collect();
            joins.into_iter().map(|j| j.join().unwrap()).collect()
        })
    }

    #[test]
    fn broadcast_copies_rank_0s_tensors_into_every_rank_bucket_by_bucket() {
        // A cap of 16 bytes: several buffers per dtype.
        let out = on_world(3, |rank, group| {
            let ts = tensors_of(rank);
            broadcast_coalesced_with(group, &ts, 16).unwrap();
            ts.iter().map(values).collect::<Vec<_>>()
        });
        let root: Vec<Vec<f64>> = tensors_of(0).iter().map(values).collect();
        for (rank, got) in out.iter().enumerate() {
            assert_eq!(got, &root, "rank {rank}");
        }
        assert_eq!(root[0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn reduce_sums_the_gradients_into_rank_0_and_zeroes_the_others() {
        // Rank r's gradient of Σ p·c is c = (r + 1)·(1, 2, …); over ranks 1, 2, 3 the sum at
        // rank 0 is 6·(1, 2, …) plus the 10·(1, 2, …) rank 0 had already accumulated.
        let out = on_world(3, |rank, group| {
            let ps: Vec<Tensor> = tensors_of(0)
                .iter()
                .map(|t| t.detach().zeros_like().set_requires_grad(true))
                .collect();
            let coefficients = tensors_of(rank);
            if rank == 0 {
                for (p, c) in ps.iter().zip(&coefficients) {
                    (p * (c.detach() * 10.0)).sum(Kind::Double).backward();
                }
            }
            for (p, c) in ps.iter().zip(&coefficients) {
                (p * c.detach()).sum(Kind::Double).backward();
            }
            reduce_add_coalesced_with(group, &ps, 24).unwrap();
            ps.iter().map(|p| values(&p.grad())).collect::<Vec<_>>()
        });
        let base: Vec<Vec<f64>> = tensors_of(0).iter().map(values).collect();
        for (j, b) in base.iter().enumerate() {
            let expected: Vec<f64> = b.iter().map(|v| v * 16.0).collect();
            assert_eq!(out[0][j], expected, "rank 0, tensor {j}");
            for (rank, got) in out.iter().enumerate().skip(1) {
                assert!(
                    got[j].iter().all(|&v| v == 0.0),
                    "rank {rank}: {:?}",
                    got[j]
                );
            }
        }
    }

    #[test]
    fn a_parameter_without_gradient_is_an_error_naming_it() {
        let out = on_world(1, |_, group| {
            let p = Tensor::zeros([2], (F, Device::Cpu)).set_requires_grad(true);
            reduce_add_coalesced(group, &[p]).unwrap_err().to_string()
        });
        assert_eq!(out[0], "c10d reduce: parameter 0 has no gradient on rank 0");
    }
}
