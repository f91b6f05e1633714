//! DistributedDataParallel's arithmetic on c10d: every rank starts from rank 0's
//! parameters, and after each backward the gradients are averaged over the ranks in
//! buckets, as `torch.nn.parallel.DistributedDataParallel` does them.
//!
//! The buckets follow DDP's defaults: parameters in reverse order (the order backward makes
//! their gradients), the first bucket capped at 1 MiB and the others at 25 MiB
//! (`bucket_cap_mb`), one dtype per bucket. Each bucket is flattened, divided by the world
//! size and all-reduced (summed) by c10d, then copied back. PyTorch overlaps a bucket's
//! all-reduce with the rest of backward; here the all-reduces follow backward, one per
//! bucket, so a step does the same communication in the same sizes without the overlap.
use tch::{Kind, Tensor};

use crate::c10d::{C10dError, ProcessGroup};

/// DDP's first bucket (`dist._DEFAULT_FIRST_BUCKET_BYTES`).
pub const FIRST_BUCKET_BYTES: usize = 1 << 20;
/// DDP's `bucket_cap_mb` = 25.
pub const BUCKET_BYTES: usize = 25 << 20;

/// The parameters' indices in each bucket, as c10d's `compute_bucket_assignment_by_size`
/// makes them: parameters taken in reverse order into an open bucket per dtype, a bucket
/// closed once its bytes reach its cap (`first` for a dtype's first bucket, `cap` after);
/// closed buckets in the order they closed, then the open ones.
pub fn buckets(params: &[(usize, Kind)], first: usize, cap: usize) -> Vec<Vec<usize>> {
    per_dtype(params, (0..params.len()).rev(), first, cap)
}

/// The tensors' indices taken in `order` into an open group per dtype, a group closed once
/// its bytes reach its cap (`first` for a dtype's first group, `cap` after); closed groups
/// in the order they closed, then the open ones in the order their dtypes came. DDP's
/// buckets and DataParallel's coalesced buffers are both made so.
pub(crate) fn per_dtype(
    tensors: &[(usize, Kind)],
    order: impl Iterator<Item = usize>,
    first: usize,
    cap: usize,
) -> Vec<Vec<usize>> {
    // Per dtype: (open group, its bytes, groups of this dtype closed so far).
    let mut open: Vec<(Kind, Vec<usize>, usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for index in order {
        let (size, kind) = tensors[index];
        let slot = match open.iter().position(|o| o.0 == kind) {
            Some(slot) => slot,
            None => {
                open.push((kind, Vec::new(), 0, 0));
                open.len() - 1
            }
        };
        let (_, group, bytes, closed) = &mut open[slot];
        group.push(index);
        *bytes += size * kind.elt_size_in_bytes();
        let limit = if *closed == 0 { first } else { cap };
        if *bytes >= limit {
            out.push(std::mem::take(group));
            *bytes = 0;
            *closed += 1;
        }
    }
    out.extend(open.into_iter().map(|o| o.1).filter(|g| !g.is_empty()));
    out
}

/// The gradient averaging of one rank's replica.
pub struct Ddp {
    group: ProcessGroup,
    params: Vec<Tensor>,
    buckets: Vec<Vec<usize>>,
    /// The module's buffers (BatchNorm's running statistics), in the same order on every
    /// rank: DDP's `broadcast_buffers` copies rank 0's before each forward.
    buffers: Vec<Tensor>,
}

impl Ddp {
    /// Wraps a replica's `params` (its trainable tensors) and `buffers`, each in the same
    /// order on every rank, and copies rank 0's values of both into every rank's, as DDP's
    /// constructor does.
    pub fn new(
        group: ProcessGroup,
        params: Vec<Tensor>,
        buffers: Vec<Tensor>,
    ) -> Result<Self, C10dError> {
        Self::with_caps(group, params, buffers, FIRST_BUCKET_BYTES, BUCKET_BYTES)
    }

    /// [`Ddp::new`] with other bucket caps.
    pub fn with_caps(
        group: ProcessGroup,
        params: Vec<Tensor>,
        buffers: Vec<Tensor>,
        first: usize,
        cap: usize,
    ) -> Result<Self, C10dError> {
        let shapes: Vec<(usize, Kind)> = params.iter().map(|p| (p.numel(), p.kind())).collect();
        let buckets = buckets(&shapes, first, cap);
        let mut ddp = Self {
            group,
            params,
            buckets,
            buffers,
        };
        ddp.broadcast_parameters()?;
        ddp.broadcast_buffers()?;
        Ok(ddp)
    }

    /// Copies rank 0's buffers into every rank's, one flattened tensor per dtype (DDP does
    /// it before each forward when `broadcast_buffers`, its default, is on).
    pub fn broadcast_buffers(&mut self) -> Result<(), C10dError> {
        let mut kinds: Vec<Kind> = Vec::new();
        for b in &self.buffers {
            if !kinds.contains(&b.kind()) {
                kinds.push(b.kind());
            }
        }
        for kind in kinds {
            let members: Vec<Tensor> = self
                .buffers
                .iter()
                .filter(|b| b.kind() == kind)
                .map(Tensor::shallow_clone)
                .collect();
            let mut flat = flatten(&members);
            self.group.broadcast(&mut flat, 0)?;
            tch::no_grad(|| unflatten_into(&flat, &members));
        }
        Ok(())
    }

    /// The buckets, as indices into the parameters.
    pub fn bucket_indices(&self) -> &[Vec<usize>] {
        &self.buckets
    }

    /// The process group.
    pub fn group(&mut self) -> &mut ProcessGroup {
        &mut self.group
    }

    /// Copies rank 0's parameters into every rank's, bucket by bucket.
    pub fn broadcast_parameters(&mut self) -> Result<(), C10dError> {
        for bucket in &self.buckets {
            let members: Vec<Tensor> = bucket.iter().map(|&i| self.params[i].detach()).collect();
            let mut flat = flatten(&members);
            self.group.broadcast(&mut flat, 0)?;
            tch::no_grad(|| unflatten_into(&flat, &members));
        }
        Ok(())
    }

    /// Averages the gradients over the ranks, bucket by bucket (after `backward`). Every
    /// parameter must have one: as DDP without `find_unused_parameters`, a parameter that
    /// took no part in the step is an error.
    pub fn average_gradients(&mut self) -> Result<(), C10dError> {
        let world = self.group.world() as f64;
        for bucket in &self.buckets {
            let mut grads = Vec::with_capacity(bucket.len());
            for &i in bucket {
                let g = self.params[i].grad();
                if !g.defined() {
                    return Err(C10dError {
                        operation: "all_reduce",
                        message: format!(
                            "parameter {i} has no gradient: every parameter must take part in each step"
                        ),
                    });
                }
                grads.push(g);
            }
            let mut flat = flatten(&grads) / world;
            self.group.all_reduce_sum(&mut flat)?;
            tch::no_grad(|| unflatten_into(&flat, &grads));
        }
        Ok(())
    }
}

/// The tensors, flattened and joined into one contiguous tensor.
pub(crate) fn flatten(tensors: &[Tensor]) -> Tensor {
    let flat: Vec<Tensor> = tensors.iter().map(|t| t.reshape([-1])).collect();
    Tensor::cat(&flat, 0)
}

/// Copies consecutive slices of `flat` into `tensors`, in place.
pub(crate) fn unflatten_into(flat: &Tensor, tensors: &[Tensor]) {
    let mut offset = 0i64;
    for t in tensors {
        let n = t.numel() as i64;
        let mut dst = t.shallow_clone();
        dst.copy_(&flat.narrow(0, offset, n).view_as(t));
        offset += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Kind = Kind::Float;

    #[test]
    fn buckets_go_backwards_and_cut_at_the_caps() {
        // Sizes in floats (4 bytes): caps of 40 bytes first, 80 after.
        let params = [(3, F), (5, F), (4, F), (10, F), (2, F), (6, F)];
        // Backwards: 6 (24 B), 2 (→ 32 B, under 40), 10 (→ 72 B, closed at the cap of 40);
        // then 4 (16 B), 5 (→ 36 B), 3 (→ 48 B): under the cap of 80, left open.
        assert_eq!(buckets(&params, 40, 80), vec![vec![5, 4, 3], vec![2, 1, 0]]);
        // One open bucket per dtype: a bucket that reached its cap comes first, then the
        // open ones in the order their dtypes first came.
        let mixed = [(1, F), (1, Kind::Double), (10, F)];
        assert_eq!(
            buckets(&mixed, 40, 1 << 20),
            vec![vec![2], vec![0], vec![1]]
        );
        let mixed = [(1, F), (1, Kind::Double), (1, F)];
        assert_eq!(buckets(&mixed, 40, 1 << 20), vec![vec![2, 0], vec![1]]);
        assert!(buckets(&[], 1, 1).is_empty());
    }

    #[test]
    fn flatten_and_unflatten_round_trip() {
        let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).view([2, 2]);
        let b = Tensor::from_slice(&[5.0f32]);
        let flat = flatten(&[a.shallow_clone(), b.shallow_clone()]);
        assert_eq!(
            Vec::<f32>::try_from(&flat).unwrap(),
            [1.0, 2.0, 3.0, 4.0, 5.0]
        );
        let doubled = &flat * 2.0;
        unflatten_into(&doubled, &[a.shallow_clone(), b.shallow_clone()]);
        assert_eq!(
            Vec::<f32>::try_from(a.reshape([-1])).unwrap(),
            [2.0, 4.0, 6.0, 8.0]
        );
        assert_eq!(b.double_value(&[0]), 10.0);
    }
}
