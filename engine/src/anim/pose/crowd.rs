use glam::Affine3A;

use crate::anim::{
    AnimError, Clip, LocalToModelJob, PlaybackMode, SamplingContext, SamplingJob, Skeleton, Skin,
    Transform,
};

/// Where [`Crowd::animate`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Parallelism {
    /// On the calling thread; rayon is not touched.
    #[default]
    Single,
    /// One thread per core (`std::thread::available_parallelism`), in a
    /// pool the crowd owns.
    All,
    /// `n` threads in a pool the crowd owns; `Threads(1)` is `Single`, and
    /// `Threads(0)` is an error.
    Threads(usize),
}

/// One member of a crowd: which clip it plays and where its play head is.
/// At frame time `t` it samples clip time `time_offset + t * speed`,
/// wrapped or clamped by `mode`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdInstance {
    /// Index into the crowd's clips.
    pub clip: usize,
    /// Clip seconds at frame time 0, so instances of one clip are out of step.
    pub time_offset: f32,
    /// Play rate: 1 is real time, 0 holds, negative plays backwards.
    pub speed: f32,
    /// Loop or clamp past the clip's ends.
    pub mode: PlaybackMode,
}

impl CrowdInstance {
    /// A looping instance.
    pub fn new(clip: usize, time_offset: f32, speed: f32) -> Self {
        Self {
            clip,
            time_offset,
            speed,
            mode: PlaybackMode::Loop,
        }
    }
}

/// Instances are animated in at most this many tasks, each a contiguous
/// run of instances with its own scratch: enough for rayon to balance a few
/// dozen threads, few enough that the scratch stays small.
const MAX_TASKS: usize = 64;

/// A task's working pose. Locals, model and skinning matrices live for one
/// instance at a time, so they are per task, not per instance: the scratch
/// stays in cache instead of streaming a crowd-sized array through memory.
#[derive(Clone, Debug)]
struct Scratch {
    locals: Vec<Transform>,
    models: Vec<Affine3A>,
    skin: Vec<Affine3A>,
}

/// Animates many instances of one skinned character (one skeleton, one
/// skin, a set of clips), optionally in parallel: per instance, sample its
/// clip, local-to-model, skinning matrices (`model[joint] * inverse_bind`),
/// then hand them to the caller's encoder.
///
/// Everything a frame needs is allocated in [`Crowd::new`] (a sampling
/// context per instance, a scratch pose per task) or on the first frame
/// with a new [`Parallelism`] (its thread pool); a frame allocates nothing
/// of its own. The result of an instance does not depend on the
/// parallelism: every thread count gives bitwise the same output.
pub struct Crowd {
    skeleton: Skeleton,
    clips: Vec<Clip>,
    skin: Skin,
    instances: Vec<CrowdInstance>,
    /// One per instance: its key cursors persist from frame to frame.
    contexts: Vec<SamplingContext>,
    /// Instances per task (the last task may have fewer).
    per_task: usize,
    /// One per task.
    scratch: Vec<Scratch>,
    /// Built on the first parallel frame, rebuilt only when the thread
    /// count asked for changes.
    pool: Option<rayon::ThreadPool>,
}

impl std::fmt::Debug for Crowd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crowd")
            .field("joints", &self.skeleton.len())
            .field("clips", &self.clips.len())
            .field("skin", &self.skin.len())
            .field("instances", &self.instances.len())
            .field("tasks", &self.scratch.len())
            .field(
                "pool_threads",
                &self.pool.as_ref().map(|p| p.current_num_threads()),
            )
            .finish()
    }
}

impl Crowd {
    /// Checks the clips and skin against the skeleton and every instance
    /// against the clips, and allocates everything the frames will use.
    /// The skeleton, clips and skin are copied in.
    pub fn new(
        skeleton: &Skeleton,
        clips: &[Clip],
        skin: &Skin,
        instances: Vec<CrowdInstance>,
    ) -> Result<Self, AnimError> {
        skin.validate(skeleton)?;
        for clip in clips {
            if clip.joint_count() != skeleton.len() {
                return Err(AnimError::InvalidClip {
                    clip: clip.name().to_string(),
                    fault: format!(
                        "drives {} joints, but the crowd's skeleton has {}",
                        clip.joint_count(),
                        skeleton.len()
                    ),
                });
            }
        }
        for (i, inst) in instances.iter().enumerate() {
            check_instance(i, inst, clips.len())?;
        }
        let contexts = instances
            .iter()
            .map(|inst| SamplingContext::new(&clips[inst.clip]))
            .collect();
        let tasks = instances.len().min(MAX_TASKS);
        let per_task = instances.len().div_ceil(tasks.max(1)).max(1);
        let scratch = Scratch {
            locals: vec![Transform::IDENTITY; skeleton.len()],
            models: vec![Affine3A::IDENTITY; skeleton.len()],
            skin: vec![Affine3A::IDENTITY; skin.len()],
        };
        Ok(Self {
            skeleton: skeleton.clone(),
            clips: clips.to_vec(),
            skin: skin.clone(),
            contexts,
            per_task,
            scratch: vec![scratch; instances.len().div_ceil(per_task)],
            instances,
            pool: None,
        })
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Whether the crowd has no instances.
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    /// The instances, by index.
    pub fn instances(&self) -> &[CrowdInstance] {
        &self.instances
    }

    /// Skinning matrices per instance (the skin's entry count): the least
    /// useful stride for one matrix per element.
    pub fn skin_len(&self) -> usize {
        self.skin.len()
    }

    /// The crowd's copy of the skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The crowd's copies of the clips; [`CrowdInstance::clip`] indexes them.
    pub fn clips(&self) -> &[Clip] {
        &self.clips
    }

    /// The crowd's copy of the skin.
    pub fn skin(&self) -> &Skin {
        &self.skin
    }

    /// Replaces instance `index` (another clip, offset or speed). A new
    /// clip gets a fresh sampling context, the one allocation outside `new`.
    pub fn set_instance(&mut self, index: usize, instance: CrowdInstance) -> Result<(), AnimError> {
        let count = self.instances.len();
        let slot = self.instances.get_mut(index).ok_or_else(|| {
            AnimError::InvalidJob(format!("crowd instance {index} outside 0..{count}"))
        })?;
        check_instance(index, &instance, self.clips.len())?;
        if slot.clip != instance.clip {
            self.contexts[index] = SamplingContext::new(&self.clips[instance.clip]);
        }
        *slot = instance;
        Ok(())
    }

    /// The clips, instances and their sampling contexts, for the weight
    /// sampling (`crowd_weights`).
    pub(crate) fn weight_parts(&mut self) -> (&[Clip], &[CrowdInstance], &mut [SamplingContext]) {
        (&self.clips, &self.instances, &mut self.contexts)
    }

    /// Animates every instance at frame time `time` and calls
    /// `sink(instance, skinning_matrices)` once per instance, from whichever
    /// thread animated it, with one matrix per skin entry.
    pub fn animate<F>(&mut self, time: f32, threads: Parallelism, sink: F) -> Result<(), AnimError>
    where
        F: Fn(usize, &[Affine3A]) + Sync,
    {
        // A slice of zero-sized units costs no memory: one per instance
        // lets `animate_into` do the splitting.
        let mut units = vec![(); self.instances.len()];
        self.animate_into(time, threads, &mut units, 1, |i, skin, _| sink(i, skin))
    }

    /// Animates every instance at frame time `time` and calls
    /// `encode(instance, skinning_matrices, chunk)` once per instance with
    /// `chunk = &mut out[instance * stride..(instance + 1) * stride]`, so the
    /// encoder writes straight into the caller's memory (a mapped palette
    /// buffer seen as `[[f32; 4]]` with `stride = 3 * skin_len()` for 4x3
    /// rows, say). Elements of `out` past `len() * stride` are not touched.
    ///
    /// Errors, before anything is written, if `time` is not finite, `stride`
    /// is zero, `out` is shorter than `len() * stride`, or the thread pool
    /// cannot be built.
    pub fn animate_into<T, E>(
        &mut self,
        time: f32,
        threads: Parallelism,
        out: &mut [T],
        stride: usize,
        encode: E,
    ) -> Result<(), AnimError>
    where
        T: Send,
        E: Fn(usize, &[Affine3A], &mut [T]) + Sync,
    {
        if stride == 0 {
            return Err(AnimError::InvalidJob(
                "crowd output stride is zero".to_string(),
            ));
        }
        let n = self.instances.len();
        let needed = n.checked_mul(stride).ok_or_else(|| {
            AnimError::InvalidJob(format!(
                "crowd output of {n} instances x stride {stride} overflows"
            ))
        })?;
        if out.len() < needed {
            return Err(AnimError::LengthMismatch {
                what: "crowd output (instances x stride)",
                expected: needed,
                got: out.len(),
            });
        }
        self.animate_split(
            time,
            threads,
            Strided::new(&mut out[..needed], stride),
            |i, skin, chunk: Strided<'_, T>| {
                encode(i, skin, chunk.into_slice());
                Ok::<(), AnimError>(())
            },
        )
    }

    /// The general form of [`Crowd::animate_into`]: `out` is any
    /// [`CrowdOutput`] (a [`Strided`] slice, or a tuple of them for several
    /// per-instance streams: palette vec4s, instance records, skinned
    /// vertices...), and `encode(instance, skinning_matrices, part)` gets
    /// the instance's own part, split off without copying or allocating.
    /// The first error `encode` returns stops the frame and is returned
    /// (instances already written stay written).
    pub fn animate_split<O, E, Er>(
        &mut self,
        time: f32,
        threads: Parallelism,
        mut out: O,
        encode: E,
    ) -> Result<(), Er>
    where
        O: CrowdOutput,
        E: Fn(usize, &[Affine3A], O) -> Result<(), Er> + Sync,
        Er: From<AnimError> + Send,
    {
        if !time.is_finite() {
            return Err(AnimError::InvalidJob(format!("crowd frame time {time}")).into());
        }
        let n = self.instances.len();
        if out.capacity() < n {
            return Err(AnimError::LengthMismatch {
                what: "crowd output instances",
                expected: n,
                got: out.capacity(),
            }
            .into());
        }
        if n == 0 {
            return Ok(());
        }
        let out = out.split_front(n);
        let count = thread_count(threads)?;
        let run = Run {
            frame: Frame {
                skeleton: &self.skeleton,
                clips: &self.clips,
                skin: &self.skin,
                time,
            },
            instances: &self.instances,
            per: self.per_task,
            encode: &encode,
        };
        let contexts = &mut self.contexts;
        let scratch = &mut self.scratch;
        if count == 1 {
            // Every task's instances in order on this thread, sharing the
            // first scratch.
            return run.task(0, &mut scratch[0], contexts, out);
        }
        let pool = match self.pool.take() {
            Some(p) if p.current_num_threads() == count => p,
            _ => rayon::ThreadPoolBuilder::new()
                .num_threads(count)
                .thread_name(|i| format!("vkskin-crowd-{i}"))
                .build()
                .map_err(|e| {
                    AnimError::InvalidJob(format!("crowd thread pool of {count} threads: {e}"))
                })?,
        };
        let result = pool.install(|| run.tasks(0, scratch, contexts, out));
        self.pool = Some(pool);
        result
    }
}

/// Per-instance destinations a [`Crowd`] animates into: each instance's
/// part is split off the front, without copying or allocating, so parts
/// can go to different threads.
pub trait CrowdOutput: Send + Sized {
    /// How many instances' parts this holds.
    fn capacity(&self) -> usize;
    /// Splits off the first `instances` parts (at most [`Self::capacity`]);
    /// `self` keeps the rest.
    fn split_front(&mut self, instances: usize) -> Self;
}

/// A slice holding `stride` elements per instance. A stride of zero gives
/// every instance an empty part (a stream this frame does not use).
#[derive(Debug)]
pub struct Strided<'a, T> {
    data: &'a mut [T],
    stride: usize,
}

impl<'a, T> Strided<'a, T> {
    /// `data` split into parts of `stride` elements, one per instance.
    pub fn new(data: &'a mut [T], stride: usize) -> Self {
        Self { data, stride }
    }

    /// The elements not yet split off.
    pub fn into_slice(self) -> &'a mut [T] {
        self.data
    }
}

impl<T: Send> CrowdOutput for Strided<'_, T> {
    fn capacity(&self) -> usize {
        self.data
            .len()
            .checked_div(self.stride)
            .unwrap_or(usize::MAX)
    }

    fn split_front(&mut self, instances: usize) -> Self {
        let take = instances.saturating_mul(self.stride).min(self.data.len());
        let (front, rest) = std::mem::take(&mut self.data).split_at_mut(take);
        self.data = rest;
        Self {
            data: front,
            stride: self.stride,
        }
    }
}

macro_rules! crowd_output_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: CrowdOutput),+> CrowdOutput for ($($name,)+) {
            fn capacity(&self) -> usize {
                let mut c = usize::MAX;
                $(c = c.min(self.$idx.capacity());)+
                c
            }

            fn split_front(&mut self, instances: usize) -> Self {
                ($(self.$idx.split_front(instances),)+)
            }
        }
    };
}

crowd_output_tuple!(A 0, B 1);
crowd_output_tuple!(A 0, B 1, C 2);
crowd_output_tuple!(A 0, B 1, C 2, D 3);

/// One frame's work, shared by its tasks.
struct Run<'a, E> {
    frame: Frame<'a>,
    instances: &'a [CrowdInstance],
    /// Instances per task.
    per: usize,
    encode: &'a E,
}

impl<E> Run<'_, E> {
    /// Instances `first..first + contexts.len()`, in order, with one scratch.
    fn task<O, Er>(
        &self,
        first: usize,
        scratch: &mut Scratch,
        contexts: &mut [SamplingContext],
        mut out: O,
    ) -> Result<(), Er>
    where
        O: CrowdOutput,
        E: Fn(usize, &[Affine3A], O) -> Result<(), Er>,
        Er: From<AnimError>,
    {
        let todo = self.instances[first..].iter().zip(contexts);
        for (j, (inst, ctx)) in todo.enumerate() {
            self.frame.pose(inst, ctx, scratch)?;
            (self.encode)(first + j, &scratch.skin, out.split_front(1))?;
        }
        Ok(())
    }

    /// Tasks (one per scratch) from instance `first`, halved recursively
    /// with `rayon::join` (stack jobs: nothing allocated per task).
    fn tasks<O, Er>(
        &self,
        first: usize,
        scratch: &mut [Scratch],
        contexts: &mut [SamplingContext],
        mut out: O,
    ) -> Result<(), Er>
    where
        O: CrowdOutput,
        E: Fn(usize, &[Affine3A], O) -> Result<(), Er> + Sync,
        Er: From<AnimError> + Send,
    {
        match scratch {
            [] => Ok(()),
            [one] => self.task(first, one, contexts, out),
            _ => {
                let mid = scratch.len() / 2;
                let split = (mid * self.per).min(contexts.len());
                let (s1, s2) = scratch.split_at_mut(mid);
                let (c1, c2) = contexts.split_at_mut(split);
                let o1 = out.split_front(split);
                let (r1, r2) = rayon::join(
                    || self.tasks(first, s1, c1, o1),
                    || self.tasks(first + split, s2, c2, out),
                );
                r1.and(r2)
            }
        }
    }
}

fn check_instance(index: usize, inst: &CrowdInstance, clips: usize) -> Result<(), AnimError> {
    if inst.clip >= clips {
        return Err(AnimError::InvalidJob(format!(
            "crowd instance {index} plays clip {}, but there are {clips} clips",
            inst.clip
        )));
    }
    if !inst.time_offset.is_finite() || !inst.speed.is_finite() {
        return Err(AnimError::InvalidJob(format!(
            "crowd instance {index} has time offset {} and speed {}",
            inst.time_offset, inst.speed
        )));
    }
    Ok(())
}

fn thread_count(threads: Parallelism) -> Result<usize, AnimError> {
    match threads {
        Parallelism::Single => Ok(1),
        Parallelism::All => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        Parallelism::Threads(0) => Err(AnimError::InvalidJob(
            "crowd asked for zero threads".to_string(),
        )),
        Parallelism::Threads(n) => Ok(n),
    }
}

/// What every instance of one frame shares.
#[derive(Clone, Copy)]
struct Frame<'a> {
    skeleton: &'a Skeleton,
    clips: &'a [Clip],
    skin: &'a Skin,
    time: f32,
}

impl Frame<'_> {
    /// Samples, local-to-model and skinning matrices of one instance into
    /// `scratch`.
    fn pose(
        &self,
        inst: &CrowdInstance,
        context: &mut SamplingContext,
        scratch: &mut Scratch,
    ) -> Result<(), AnimError> {
        let clip = &self.clips[inst.clip];
        SamplingJob {
            clip,
            context,
            time: clip_time(inst, self.time, clip.duration()),
            mode: inst.mode,
            output: &mut scratch.locals,
        }
        .run()?;
        LocalToModelJob::full(self.skeleton, &scratch.locals, &mut scratch.models).run()?;
        self.skin.skin_matrices(&scratch.models, &mut scratch.skin)
    }
}

/// The instance's unwrapped clip time, already looped when it loops: in
/// f64 so a long-running frame clock times a speed keeps its fraction.
pub(crate) fn clip_time(inst: &CrowdInstance, time: f32, duration: f32) -> f32 {
    let t = f64::from(inst.time_offset) + f64::from(time) * f64::from(inst.speed);
    if inst.mode == PlaybackMode::Loop && duration > 0.0 {
        t.rem_euclid(f64::from(duration)) as f32
    } else {
        t as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{encode_4x3, Affine4x3};
    use crate::assets::builtin::{procedural, Character};

    fn crowd(count: usize) -> Crowd {
        let model = procedural::bench_character(300, 40).unwrap();
        let instances = (0..count)
            .map(|i| CrowdInstance::new(0, 0.37 * i as f32, 0.5 + 0.013 * i as f32))
            .collect();
        let skin = Skin::whole_skeleton(&model.skeleton);
        Crowd::new(&model.skeleton, &model.clips, &skin, instances).unwrap()
    }

    fn rows(crowd: &mut Crowd, time: f32, par: Parallelism) -> Vec<[f32; 4]> {
        let stride = 3 * crowd.skin_len();
        let mut out = vec![[f32::NAN; 4]; crowd.len() * stride];
        crowd
            .animate_into(time, par, &mut out, stride, |_, skin, rows| {
                for (m, r) in skin.iter().zip(rows.chunks_exact_mut(3)) {
                    r.copy_from_slice(&Affine4x3::from_affine(m).rows);
                }
            })
            .unwrap();
        out
    }

    fn bits(v: &[[f32; 4]]) -> Vec<u32> {
        v.iter().flatten().map(|f| f.to_bits()).collect()
    }

    #[test]
    fn split_outputs_give_each_instance_its_own_parts_and_errors_stop_the_frame() {
        let mut c = crowd(150);
        for par in [Parallelism::Single, Parallelism::Threads(3)] {
            let mut wide = vec![usize::MAX; 150 * 2];
            let mut narrow = vec![usize::MAX; 150];
            let mut unused: Vec<u8> = Vec::new();
            c.animate_split(
                0.25,
                par,
                (
                    Strided::new(&mut wide, 2),
                    Strided::new(&mut narrow, 1),
                    Strided::new(&mut unused, 0),
                ),
                |i, skin, (w, n, u)| {
                    let (w, n, u) = (w.into_slice(), n.into_slice(), u.into_slice());
                    assert_eq!((w.len(), n.len(), u.len(), skin.len()), (2, 1, 0, 40));
                    w.fill(i);
                    n[0] = i;
                    Ok::<(), AnimError>(())
                },
            )
            .unwrap();
            assert!(wide.iter().enumerate().all(|(k, &v)| v == k / 2));
            assert!(narrow.iter().enumerate().all(|(k, &v)| v == k));
            // An encoder's error comes back.
            let mut out = vec![0u32; 150];
            let err = c
                .animate_split(0.5, par, Strided::new(&mut out, 1), |i, _, _| {
                    if i == 77 {
                        Err(AnimError::InvalidJob("instance 77 refused".into()))
                    } else {
                        Ok(())
                    }
                })
                .unwrap_err();
            assert!(err.to_string().contains("instance 77 refused"), "{err}");
            // Too small an output is refused before anything runs.
            let mut short = vec![0u32; 149];
            assert!(c
                .animate_split(0.5, par, Strided::new(&mut short, 1), |_, _, _| {
                    Ok::<(), AnimError>(())
                })
                .is_err());
        }
    }

    #[test]
    fn parallel_equals_single_bitwise() {
        let mut single = crowd(100);
        let mut parallel = crowd(100);
        for frame in 0..5 {
            let t = 0.3 * frame as f32;
            let want = rows(&mut single, t, Parallelism::Single);
            assert!(want.iter().flatten().all(|f| f.is_finite()));
            for par in [
                Parallelism::Threads(2),
                Parallelism::Threads(3),
                Parallelism::All,
            ] {
                let got = rows(&mut parallel, t, par);
                assert_eq!(bits(&want), bits(&got), "frame {frame} {par:?}");
            }
        }
    }

    #[test]
    fn character_clips_parallel_equals_single_bitwise() {
        let model = Character::model();
        let skin = model.skins[0].clone();
        let instances: Vec<CrowdInstance> = (0..100)
            .map(|i| CrowdInstance::new(i % model.clips.len(), 0.11 * i as f32, 1.0))
            .collect();
        let mut single =
            Crowd::new(&model.skeleton, &model.clips, &skin, instances.clone()).unwrap();
        let mut parallel = Crowd::new(&model.skeleton, &model.clips, &skin, instances).unwrap();
        let want = rows(&mut single, 1.25, Parallelism::Single);
        let got = rows(&mut parallel, 1.25, Parallelism::Threads(2));
        assert_eq!(bits(&want), bits(&got));
    }

    #[test]
    fn matches_the_jobs_run_by_hand() {
        let model = procedural::bench_character(300, 40).unwrap();
        let skin = Skin::whole_skeleton(&model.skeleton);
        let inst = CrowdInstance::new(0, 1.5, -0.75);
        let mut c = Crowd::new(&model.skeleton, &model.clips, &skin, vec![inst; 3]).unwrap();
        let time = 7.3;
        let got = rows(&mut c, time, Parallelism::Threads(2));

        let clip = &model.clips[0];
        let mut ctx = SamplingContext::new(clip);
        let mut locals = vec![Transform::IDENTITY; model.skeleton.len()];
        let mut models = vec![Affine3A::IDENTITY; model.skeleton.len()];
        let mut mats = vec![Affine3A::IDENTITY; skin.len()];
        SamplingJob {
            clip,
            context: &mut ctx,
            time: 1.5 - 0.75 * time,
            mode: PlaybackMode::Loop,
            output: &mut locals,
        }
        .run()
        .unwrap();
        LocalToModelJob::full(&model.skeleton, &locals, &mut models)
            .run()
            .unwrap();
        skin.skin_matrices(&models, &mut mats).unwrap();
        let mut want = vec![Affine4x3::IDENTITY; skin.len()];
        encode_4x3(&mats, &mut want);
        for (i, chunk) in got.chunks_exact(3 * skin.len()).enumerate() {
            for (k, w) in want.iter().enumerate() {
                for r in 0..3 {
                    for (a, b) in chunk[3 * k + r].iter().zip(&w.rows[r]) {
                        assert!((a - b).abs() < 1e-5, "instance {i} bone {k}: {a} vs {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn sink_sees_every_instance_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let mut c = crowd(130);
        let seen: Vec<AtomicUsize> = (0..130).map(|_| AtomicUsize::new(0)).collect();
        let len = c.skin_len();
        c.animate(0.5, Parallelism::Threads(2), |i, skin| {
            assert_eq!(skin.len(), len);
            seen[i].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn bad_clip_index_is_an_error() {
        let model = procedural::bench_character(300, 40).unwrap();
        let skin = Skin::whole_skeleton(&model.skeleton);
        let instances = vec![
            CrowdInstance::new(0, 0.0, 1.0),
            CrowdInstance::new(1, 0.0, 1.0),
        ];
        let err = Crowd::new(&model.skeleton, &model.clips, &skin, instances).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("instance 1") && text.contains("clip 1"),
            "{text}"
        );

        let mut c = crowd(4);
        let err = c
            .set_instance(2, CrowdInstance::new(5, 0.0, 1.0))
            .unwrap_err();
        assert!(err.to_string().contains("clip 5"), "{err}");
        assert!(c.set_instance(4, CrowdInstance::new(0, 0.0, 1.0)).is_err());
        let nan = CrowdInstance::new(0, f32::NAN, 1.0);
        assert!(c.set_instance(0, nan).is_err());
    }

    #[test]
    fn clip_for_another_skeleton_is_an_error() {
        let small = procedural::bench_character(300, 10).unwrap();
        let big = procedural::bench_character(300, 40).unwrap();
        let skin = Skin::whole_skeleton(&big.skeleton);
        let instances = vec![CrowdInstance::new(0, 0.0, 1.0)];
        assert!(matches!(
            Crowd::new(&big.skeleton, &small.clips, &skin, instances),
            Err(AnimError::InvalidClip { .. })
        ));
    }

    #[test]
    fn short_output_is_an_error() {
        let mut c = crowd(10);
        let stride = 3 * c.skin_len();
        let mut out = vec![[0.0f32; 4]; 10 * stride - 1];
        for par in [Parallelism::Single, Parallelism::Threads(2)] {
            let err = c
                .animate_into(0.0, par, &mut out, stride, |_, _, _| {})
                .unwrap_err();
            assert!(
                matches!(err, AnimError::LengthMismatch { expected, got, .. }
                    if expected == 10 * stride && got == 10 * stride - 1),
                "{err}"
            );
        }
        // Nothing was written.
        assert!(out.iter().flatten().all(|&f| f == 0.0));
        assert!(c
            .animate_into(0.0, Parallelism::Single, &mut out, 0, |_, _, _| {})
            .is_err());
        assert!(c
            .animate_into(
                f32::INFINITY,
                Parallelism::Single,
                &mut out,
                1,
                |_, _, _| {}
            )
            .is_err());
        assert!(c
            .animate_into(0.0, Parallelism::Threads(0), &mut out, 1, |_, _, _| {})
            .is_err());
    }

    #[test]
    fn longer_output_keeps_its_tail() {
        let mut c = crowd(3);
        let mut out = vec![7u32; 3 * 2 + 5];
        c.animate_into(0.0, Parallelism::Threads(2), &mut out, 2, |i, _, o| {
            o.fill(i as u32)
        })
        .unwrap();
        assert_eq!(out, [0, 0, 1, 1, 2, 2, 7, 7, 7, 7, 7]);
    }

    #[test]
    fn empty_crowd_animates_nothing() {
        let mut c = crowd(0);
        assert!(c.is_empty());
        let mut out: Vec<u8> = Vec::new();
        c.animate_into(1.0, Parallelism::All, &mut out, 4, |_, _, _| panic!())
            .unwrap();
    }

    #[test]
    fn clip_time_loops_in_both_directions() {
        let inst = CrowdInstance::new(0, 0.5, -1.0);
        assert_eq!(clip_time(&inst, 1.0, 2.0), 1.5);
        assert_eq!(clip_time(&inst, 0.25, 2.0), 0.25);
        let clamp = CrowdInstance {
            mode: PlaybackMode::Clamp,
            ..inst
        };
        assert_eq!(clip_time(&clamp, 3.0, 2.0), -2.5);
        // A day of frame time at an odd speed keeps its fraction.
        let fast = CrowdInstance::new(0, 0.0, 1.1);
        let t = clip_time(&fast, 86_400.0, 2.0);
        assert!((t - (86_400.0f64 * f64::from(1.1f32)).rem_euclid(2.0) as f32).abs() < 1e-6);
    }
}
