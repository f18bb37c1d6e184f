use glam::Affine3A;

use super::soa::PoseRead;
#[cfg(target_arch = "x86_64")]
use crate::anim::simd::avx2::LocalPose;
#[cfg(target_arch = "x86_64")]
use crate::anim::simd::Tier;
#[cfg(target_arch = "x86_64")]
use crate::anim::SoaTransforms8;
use crate::anim::{AnimError, Skeleton, SoaPose, Transform, NO_PARENT};

/// Local-to-model: `model[i] = model[parent[i]] * local[i]`, roots taking
/// `root * local[i]`. One forward pass over the flat arrays.
///
/// Only joints `from..to` are written; joints before `from` must already hold
/// valid model matrices (their parents are read, never recomputed). The full
/// update is `from = 0, to = skeleton.len()`.
pub struct LocalToModelJob<'a> {
    /// The joint hierarchy.
    pub skeleton: &'a Skeleton,
    /// Local transforms, one per joint of `skeleton`.
    pub locals: &'a [Transform],
    /// Model matrix of the skeleton's space: roots are `root * local`.
    pub root: Affine3A,
    /// First joint written; joints before it must already hold model matrices.
    pub from: usize,
    /// One past the last joint written; `from <= to <= skeleton.len()`.
    pub to: usize,
    /// Output model matrices, one per joint of `skeleton`; only `from..to` are written.
    pub models: &'a mut [Affine3A],
}

impl<'a> LocalToModelJob<'a> {
    /// The whole skeleton with an identity root.
    pub fn full(
        skeleton: &'a Skeleton,
        locals: &'a [Transform],
        models: &'a mut [Affine3A],
    ) -> Self {
        Self {
            skeleton,
            locals,
            root: Affine3A::IDENTITY,
            from: 0,
            to: skeleton.len(),
            models,
        }
    }

    /// Checks the job's lengths and range without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(
            self.skeleton,
            self.locals.len(),
            self.models.len(),
            self.from,
            self.to,
        )
    }

    /// Validates the job, then writes `models[from..to]`.
    pub fn run(self) -> Result<(), AnimError> {
        let (s, l, r) = (self.skeleton, self.locals, &self.root);
        run_job(s, l, r, self.from, self.to, self.models)
    }
}

/// [`LocalToModelJob`] reading a pose in structure-of-arrays form
/// ([`SoaPose`]): the same checks and results. A block of eight joints'
/// local matrices is built from the pose's rows as they are (the slice job
/// first transposes eight transforms), when the range starts on a block
/// (`from` a multiple of eight, as in a full update).
pub struct SoaLocalToModelJob<'a> {
    /// The joint hierarchy.
    pub skeleton: &'a Skeleton,
    /// Local pose, of `skeleton.len()` joints.
    pub locals: &'a SoaPose,
    /// Model matrix of the skeleton's space: roots are `root * local`.
    pub root: Affine3A,
    /// First joint written; joints before it must already hold model matrices.
    pub from: usize,
    /// One past the last joint written; `from <= to <= skeleton.len()`.
    pub to: usize,
    /// Output model matrices, one per joint of `skeleton`; only `from..to` are written.
    pub models: &'a mut [Affine3A],
}

impl<'a> SoaLocalToModelJob<'a> {
    /// The whole skeleton with an identity root.
    pub fn full(skeleton: &'a Skeleton, locals: &'a SoaPose, models: &'a mut [Affine3A]) -> Self {
        Self {
            skeleton,
            locals,
            root: Affine3A::IDENTITY,
            from: 0,
            to: skeleton.len(),
            models,
        }
    }

    /// Checks the job's lengths and range without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(
            self.skeleton,
            self.locals.len(),
            self.models.len(),
            self.from,
            self.to,
        )
    }

    /// Validates the job, then writes `models[from..to]`.
    pub fn run(self) -> Result<(), AnimError> {
        let (s, l, r) = (self.skeleton, self.locals, &self.root);
        run_job(s, l, r, self.from, self.to, self.models)
    }
}

/// What local-to-model reads, either layout: joint by joint for the scalar
/// path, and the kernels' view of it.
trait Locals: PoseRead {
    #[cfg(target_arch = "x86_64")]
    type Kernel: LocalPose + ?Sized;
    #[cfg(target_arch = "x86_64")]
    fn kernel(&self) -> &Self::Kernel;
}

impl Locals for [Transform] {
    #[cfg(target_arch = "x86_64")]
    type Kernel = [Transform];
    #[cfg(target_arch = "x86_64")]
    fn kernel(&self) -> &[Transform] {
        self
    }
}

impl Locals for SoaPose {
    #[cfg(target_arch = "x86_64")]
    type Kernel = [SoaTransforms8];
    #[cfg(target_arch = "x86_64")]
    fn kernel(&self) -> &[SoaTransforms8] {
        self.blocks()
    }
}

/// Either job's `run`.
fn run_job<L: Locals + ?Sized>(
    skeleton: &Skeleton,
    locals: &L,
    root: &Affine3A,
    from: usize,
    to: usize,
    models: &mut [Affine3A],
) -> Result<(), AnimError> {
    validate_job(skeleton, locals.joints(), models.len(), from, to)?;
    #[cfg(target_arch = "x86_64")]
    {
        let tier = crate::anim::simd::select::local_to_model_tier();
        if tier > Tier::Scalar {
            run_fast(skeleton, locals, root, from, to, models, tier);
            return Ok(());
        }
    }
    run_scalar(skeleton, locals, root, from, to, models);
    Ok(())
}

/// The kernel of `tier` (which the CPU must have) on a validated job.
#[cfg(target_arch = "x86_64")]
fn run_fast<L: Locals + ?Sized>(
    skeleton: &Skeleton,
    locals: &L,
    root: &Affine3A,
    from: usize,
    to: usize,
    models: &mut [Affine3A],
    tier: Tier,
) {
    use crate::anim::simd::avx2;
    let (p, l) = (skeleton.parents(), locals.kernel());
    // SAFETY: the caller checked the tier and validate() (a SoaPose has a
    // block for every eight joints); a Skeleton guarantees parents[i] < i.
    unsafe {
        match tier {
            Tier::Scalar => run_scalar(skeleton, locals, root, from, to, models),
            Tier::Avx512 => {
                crate::anim::simd::avx512::local_to_model_avx512(p, l, root, from, to, models)
            }
            _ => avx2::local_to_model(p, l, root, from, to, models),
        }
    }
}

fn validate_job(
    skeleton: &Skeleton,
    locals: usize,
    models: usize,
    from: usize,
    to: usize,
) -> Result<(), AnimError> {
    let n = skeleton.len();
    if locals != n {
        return Err(AnimError::LengthMismatch {
            what: "local transforms",
            expected: n,
            got: locals,
        });
    }
    if models != n {
        return Err(AnimError::LengthMismatch {
            what: "model matrices",
            expected: n,
            got: models,
        });
    }
    if from > to || to > n {
        return Err(AnimError::InvalidJob(format!(
            "local-to-model range {from}..{to} outside 0..{n}"
        )));
    }
    Ok(())
}

/// `model[i] = model[parent[i]] * local[i]` one joint at a time.
fn run_scalar<L: PoseRead + ?Sized>(
    skeleton: &Skeleton,
    locals: &L,
    root: &Affine3A,
    from: usize,
    to: usize,
    models: &mut [Affine3A],
) {
    let parents = &skeleton.parents()[..to];
    for i in from..to {
        let local = locals.at(i).to_affine();
        let p = parents[i];
        models[i] = if p == NO_PARENT {
            *root * local
        } else {
            models[p as usize] * local
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::simd::Tier;
    use glam::{Quat, Vec3};
    use rand::{Rng, SeedableRng};

    /// The vendor behind the AVX-512 tier's choice of kernel is CPUID's
    /// as `/proc/cpuinfo` names it.
    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn intel_is_the_cpuid_vendor() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let vendor = info
            .lines()
            .find_map(|l| l.strip_prefix("vendor_id"))
            .and_then(|l| l.split(':').nth(1))
            .map(str::trim)
            .expect("/proc/cpuinfo names the vendor");
        assert_eq!(
            crate::anim::simd::select::intel(),
            vendor == "GenuineIntel",
            "{vendor}"
        );
    }

    /// `want` with joints `from..to` zeroed, then recomputed from `locals`
    /// by the job's own run (`None`), the scalar definition, or the kernel
    /// of a tier the CPU has.
    fn recompute<L: Locals + ?Sized>(
        skeleton: &Skeleton,
        locals: &L,
        root: &Affine3A,
        (from, to): (usize, usize),
        want: &[Affine3A],
        tier: Option<Tier>,
    ) -> Vec<Affine3A> {
        let mut got = want.to_vec();
        got[from..to].fill(Affine3A::ZERO);
        match tier {
            None => run_job(skeleton, locals, root, from, to, &mut got).unwrap(),
            Some(Tier::Scalar) => run_scalar(skeleton, locals, root, from, to, &mut got),
            #[cfg(target_arch = "x86_64")]
            Some(t) => {
                validate_job(skeleton, locals.joints(), got.len(), from, to).unwrap();
                run_fast(skeleton, locals, root, from, to, &mut got, t);
            }
            #[cfg(not(target_arch = "x86_64"))]
            Some(_) => unreachable!(),
        }
        got
    }

    #[test]
    fn fast_path_matches_the_definition() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(51);
        for n in [1usize, 7, 8, 9, 30, 70] {
            for shape in 0..3 {
                let parents: Vec<Option<usize>> = (0..n)
                    .map(|i| match (shape, i) {
                        (_, 0) => None,
                        (0, i) => Some(i - 1),
                        (1, i) => Some((i - 1) / 2),
                        (_, i) => {
                            if rng.gen_bool(0.2) {
                                None
                            } else {
                                Some(rng.gen_range(0..i))
                            }
                        }
                    })
                    .collect();
                let names = (0..n).map(|i| format!("j{i}")).collect();
                let (s, _) = Skeleton::new(names, &parents, vec![Transform::IDENTITY; n]).unwrap();
                let locals: Vec<Transform> = (0..n)
                    .map(|_| Transform {
                        translation: Vec3::new(rng.gen(), rng.gen(), rng.gen()),
                        rotation: Quat::from_euler(
                            glam::EulerRot::XYZ,
                            rng.gen_range(-3.0..3.0),
                            rng.gen_range(-1.5..1.5),
                            rng.gen_range(-3.0..3.0),
                        ),
                        scale: Vec3::new(
                            rng.gen_range(0.8..1.2),
                            rng.gen_range(0.8..1.2),
                            rng.gen_range(0.8..1.2),
                        ),
                    })
                    .collect();
                let soa = SoaPose::from_transforms(&locals);
                let root = Affine3A::from_rotation_translation(Quat::from_rotation_y(0.7), Vec3::X);
                for (from, to) in [
                    (0, n),
                    (n / 2, n),
                    (n / 3, n / 2 + 1),
                    (n / 8 * 8, n),
                    (8.min(n), n),
                ] {
                    let mut want = vec![Affine3A::IDENTITY; n];
                    run_scalar(&s, &locals[..], &root, 0, n, &mut want);
                    // The jobs' own choice, the scalar path, then every
                    // fast tier the CPU has, on both layouts.
                    #[allow(unused_mut)]
                    let mut tiers = vec![None, Some(Tier::Scalar)];
                    #[cfg(target_arch = "x86_64")]
                    tiers.extend(crate::anim::simd::testable_tiers().into_iter().map(Some));
                    for tier in tiers {
                        let range = (from, to);
                        let got = recompute(&s, &locals[..], &root, range, &want, tier);
                        let soa_got = recompute(&s, &soa, &root, range, &want, tier);
                        for i in 0..n {
                            assert!(
                                got[i].abs_diff_eq(want[i], 1e-4),
                                "{tier:?} n {n} shape {shape} joint {i}"
                            );
                            assert!(
                                soa_got[i].abs_diff_eq(want[i], 1e-4),
                                "soa {tier:?} n {n} shape {shape} joint {i} range {from}..{to}"
                            );
                        }
                    }
                }
            }
        }
    }
}
