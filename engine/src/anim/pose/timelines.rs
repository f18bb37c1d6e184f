//! A clip's key-time arrays ("timelines": one per distinct set of key
//! times, shared by every track that has exactly those times) and finding
//! the current key interval in each.
//!
//! Layout: timelines of at most [`LANE_KEYS_MAX`] keys go eight at a time
//! into lane groups, numbered first (group `g` holds timelines `8g..8g+8`),
//! sorted by key count so that a group's members are about as long as each
//! other. Row `k` of a group holds key `k` of each of its eight timelines;
//! rows past a shorter member's end hold `+inf`. With AVX2 the sampler
//! counts a whole group's keys at or before `t` a row at a time (one
//! compare and one subtract for eight timelines), whether it plays on or
//! jumps: from the previous sample's smallest interval or from the
//! group's seek index (the last row before each of 16 equal spans of its
//! time range), whichever is later of those at or before `t` in every
//! lane, up to the first rows past `t` in every lane; the interval's two
//! keys in each lane come out of the same scan. Longer timelines, and the last few short ones that do not fill a
//! group, lie whole one after another and keep a per-timeline cursor.

pub(crate) use crate::anim::simd::lanes::{LaneGroup, LANES, SEEK_BUCKETS};

/// Longest timeline (in keys) a lane group takes: counting every row costs
/// about what a cursor check costs up to here, and clips of many
/// unshared, reduced tracks (the case groups are for) rarely go past it.
pub(crate) const LANE_KEYS_MAX: usize = 64;

/// Where one timeline's keys lie in [`Timelines::times`]: key `k` at
/// `at + k * stride` (`stride` is [`LANES`] in a group, 1 otherwise), `len`
/// keys (at least two).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct KeysAt {
    pub at: u32,
    pub len: u32,
    pub stride: u32,
}

// The seek index names rows in a `u8`: a group has at most
// `LANE_KEYS_MAX` rows.
const _: () = assert!(LANE_KEYS_MAX <= u8::MAX as usize + 1);

/// Every timeline of a clip (see the module notes).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Timelines {
    pub keys: Vec<KeysAt>,
    pub groups: Vec<LaneGroup>,
    pub times: Vec<f32>,
}

impl Timelines {
    /// Lays out `arrays` (each of at least two non-decreasing, finite
    /// keys). Returns the layout and, for each array, its timeline index
    /// there; `None` when the keys would not fit 31-bit offsets.
    pub fn build(arrays: &[Vec<f32>]) -> Option<(Self, Vec<u32>)> {
        let n = arrays.len();
        let mut short: Vec<usize> = (0..n)
            .filter(|&i| arrays[i].len() <= LANE_KEYS_MAX)
            .collect();
        short.sort_by_key(|&i| (arrays[i].len(), i));
        short.truncate(short.len() / LANES * LANES);
        let mut grouped = vec![false; n];
        for &i in &short {
            grouped[i] = true;
        }
        let flat: Vec<usize> = (0..n).filter(|&i| !grouped[i]).collect();
        let total: usize = short
            .chunks_exact(LANES)
            .map(|c| arrays[c[LANES - 1]].len() * LANES)
            .chain(flat.iter().map(|&i| arrays[i].len()))
            .sum();
        if total > i32::MAX as usize {
            return None;
        }
        let mut t = Self {
            keys: Vec::with_capacity(n),
            groups: Vec::with_capacity(short.len() / LANES),
            times: Vec::with_capacity(total),
        };
        let mut remap = vec![0u32; n];
        for members in short.chunks_exact(LANES) {
            let at = t.times.len();
            // Sorted by length: the last member is the longest.
            let rows = arrays[members[LANES - 1]].len();
            for k in 0..rows {
                t.times.extend(
                    members
                        .iter()
                        .map(|&i| arrays[i].get(k).copied().unwrap_or(f32::INFINITY)),
                );
            }
            for (lane, &i) in members.iter().enumerate() {
                remap[i] = t.keys.len() as u32;
                t.keys.push(KeysAt {
                    at: (at + lane) as u32,
                    len: arrays[i].len() as u32,
                    stride: LANES as u32,
                });
            }
            let mut group = LaneGroup {
                at: at as u32,
                rows: rows as u32,
                lens: std::array::from_fn(|lane| arrays[members[lane]].len() as i32),
                t0: 0.0,
                per: 0.0,
                starts: [0; SEEK_BUCKETS],
            };
            group.index_seeks(&t.times);
            t.groups.push(group);
        }
        for &i in &flat {
            remap[i] = t.keys.len() as u32;
            t.keys.push(KeysAt {
                at: t.times.len() as u32,
                len: arrays[i].len() as u32,
                stride: 1,
            });
            t.times.extend_from_slice(&arrays[i]);
        }
        Some((t, remap))
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Keys of timeline `tl`.
    pub fn key_count(&self, tl: usize) -> usize {
        self.keys[tl].len as usize
    }

    /// Key `k` of timeline `tl`.
    pub fn time(&self, tl: usize, k: usize) -> f32 {
        let at = self.keys[tl];
        self.times[at.at as usize + k * at.stride as usize]
    }
}

/// Every timeline's interval `i` and fraction `u` at `t` (see
/// [`locate_one`]) into `interval` and `fraction`. With AVX2, lane groups
/// are counted eight timelines at a time ([`locate_group_avx2`](crate::anim::simd::avx2::timelines::locate_group_avx2)); the
/// other timelines go one at a time from their cursors.
pub(crate) fn locate_all(
    tl: &Timelines,
    t: f32,
    cursors: &mut [u32],
    interval: &mut [u32],
    fraction: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if crate::anim::simd::avx2_fma() {
        // SAFETY: the tier says the CPU has AVX2 and FMA (and so POPCNT).
        unsafe { locate_all_avx2(tl, t, cursors, interval, fraction) };
        return;
    }
    locate_from::<false>(tl, 0, t, cursors, interval, fraction);
}

/// Timelines `first..` one at a time.
#[inline(always)]
fn locate_from<const SIMD: bool>(
    tl: &Timelines,
    first: usize,
    t: f32,
    cursors: &mut [u32],
    interval: &mut [u32],
    fraction: &mut [f32],
) {
    for k in first..tl.keys.len() {
        let (i, u) = locate_one::<SIMD>(&tl.times, tl.keys[k], t, &mut cursors[k]);
        interval[k] = i;
        fraction[k] = u;
    }
}

/// # Safety
/// The CPU has AVX2, FMA and POPCNT; `tl` was built by
/// [`Timelines::build`]; `cursors`, `interval` and `fraction` are as long
/// as `tl.keys`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt")]
unsafe fn locate_all_avx2(
    tl: &Timelines,
    t: f32,
    cursors: &mut [u32],
    interval: &mut [u32],
    fraction: &mut [f32],
) {
    let grouped = tl.groups.len() * LANES;
    for (g, group) in tl.groups.iter().enumerate() {
        let lanes = g * LANES..g * LANES + LANES;
        // SAFETY: AVX2 enabled here; the group lies inside `times` (built
        // so), and `lanes` inside both outputs (as long as `tl.keys`).
        unsafe {
            crate::anim::simd::avx2::timelines::locate_group_avx2(
                &tl.times,
                group,
                t,
                &mut interval[lanes.clone()],
                &mut fraction[lanes],
            )
        };
    }
    locate_from::<true>(tl, grouped, t, cursors, interval, fraction);
}

/// Finds interval `i` with `key(i) <= t < key(i+1)` and the fraction
/// `u = (t - key(i)) / (key(i+1) - key(i))` into it. Before or at the
/// first key: `(0, 0)`; at or after the last: `(len - 2, 1)`, so every
/// interpolation returns the end keys there. Forward playback moves at
/// most one interval per sample, so the cursor (a hint, always checked) is
/// tried first; a jump counts the keys (eight at a time with AVX2 over a
/// whole timeline of 8 to [`LANE_KEYS_MAX`] keys when `SIMD`, else a
/// branchless binary search).
#[inline(always)]
pub(crate) fn locate_one<const SIMD: bool>(
    times: &[f32],
    keys: KeysAt,
    t: f32,
    cursor: &mut u32,
) -> (u32, f32) {
    let (at, n, s) = (keys.at as usize, keys.len as usize, keys.stride as usize);
    let key = |k: usize| times[at + k * s];
    if t <= key(0) {
        *cursor = 0;
        return (0, 0.0);
    }
    if t >= key(n - 1) {
        *cursor = (n - 2) as u32;
        return ((n - 2) as u32, 1.0);
    }
    // Step the cursor without a branch, then check it (mispredicted
    // branches, not arithmetic, are what a per-track cursor costs).
    let c = (*cursor as usize).min(n - 2);
    let c = c + usize::from(key(c + 1) <= t && c + 2 < n);
    // Here key(0) < t < key(n-1), so the count is 1..=n-1.
    let i = if key(c) <= t && t < key(c + 1) {
        c
    } else if s == 1 {
        count_keys::<SIMD>(&times[at..at + n], t) - 1
    } else {
        keys_at_or_before_by(n, key, t) - 1
    };
    *cursor = i as u32;
    let u = ((t - key(i)) / (key(i + 1) - key(i))).clamp(0.0, 1.0);
    (i as u32, u)
}

/// [`keys_at_or_before`], counted eight keys at a time with AVX2 (`SIMD`:
/// the caller runs with AVX2 enabled) for arrays of 8 to
/// [`LANE_KEYS_MAX`] keys.
#[inline(always)]
fn count_keys<const SIMD: bool>(times: &[f32], t: f32) -> usize {
    #[cfg(target_arch = "x86_64")]
    if SIMD && (8..=LANE_KEYS_MAX).contains(&times.len()) {
        // SAFETY: SIMD only where the CPU has AVX2; at least 8 keys.
        return unsafe { crate::anim::simd::avx2::timelines::count_at_or_before_avx2(times, t) };
    }
    keys_at_or_before(times, t)
}

/// How many keys are at or before `t` (`partition_point(|k| k <= t)` on
/// sorted times), as a branchless binary search: a random seek costs a
/// fixed handful of compare-and-moves instead of mispredicted branches.
#[inline]
fn keys_at_or_before(times: &[f32], t: f32) -> usize {
    keys_at_or_before_by(times.len(), |k| times[k], t)
}

/// [`keys_at_or_before`] over `n` keys read through `key`.
#[inline(always)]
fn keys_at_or_before_by(n: usize, key: impl Fn(usize) -> f32, t: f32) -> usize {
    let mut base = 0;
    let mut len = n;
    while len > 1 {
        let half = len / 2;
        if key(base + half) <= t {
            base += half;
        }
        len -= half;
    }
    base + usize::from(n != 0 && key(base) <= t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn branchless_search_is_partition_point() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(12);
        for n in 1..40 {
            let mut times: Vec<f32> = (0..n).map(|_| rng.gen_range(0.0..4.0f32).floor()).collect();
            times.sort_by(f32::total_cmp);
            for t in [-1.0f32, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 9.0] {
                assert_eq!(
                    keys_at_or_before(&times, t),
                    times.partition_point(|&k| k <= t),
                    "{times:?} {t}"
                );
            }
        }
        assert_eq!(keys_at_or_before(&[], 1.0), 0);
    }

    /// The AVX2 count agrees with `partition_point` at every length it
    /// takes (8 to 64 keys: whole blocks of eight and every overlap of the
    /// last load), with repeated keys and `t` on, between and outside them.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn simd_count_is_partition_point() {
        if !crate::anim::simd::avx2_fma() {
            eprintln!("no AVX2: the count is not used on this CPU");
            return;
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(13);
        for n in 8..=LANE_KEYS_MAX {
            for _ in 0..20 {
                let mut times: Vec<f32> = (0..n)
                    .map(|_| rng.gen_range(0.0..20.0f32).floor() * 0.25)
                    .collect();
                times.sort_by(f32::total_cmp);
                let mut ts: Vec<f32> = times.clone();
                ts.extend([-1.0, 0.1, 2.3, 4.99, 5.0, 100.0]);
                ts.extend((0..8).map(|_| rng.gen_range(-0.5..5.5f32)));
                for t in ts {
                    // SAFETY: AVX2 checked above; n >= 8.
                    let got = unsafe {
                        crate::anim::simd::avx2::timelines::count_at_or_before_avx2(&times, t)
                    };
                    assert_eq!(got, times.partition_point(|&k| k <= t), "{n} {t} {times:?}");
                }
            }
        }
    }

    /// Key times of `n` keys on a coarse grid (so that repeats and `t`
    /// exactly on a key are common).
    fn grid_times(rng: &mut rand::rngs::StdRng, n: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..n)
            .map(|_| rng.gen_range(0..40) as f32 * 0.125)
            .collect();
        v.sort_by(f32::total_cmp);
        v
    }

    /// The definition, straight from the keys: first/last ends, else the
    /// last key at or before `t` and the divided fraction.
    fn expected(times: &[f32], t: f32) -> (u32, f32) {
        let n = times.len();
        if t <= times[0] {
            return (0, 0.0);
        }
        if t >= times[n - 1] {
            return ((n - 2) as u32, 1.0);
        }
        let i = times.partition_point(|&k| k <= t) - 1;
        let u = ((t - times[i]) / (times[i + 1] - times[i])).clamp(0.0, 1.0);
        (i as u32, u)
    }

    /// Groups, flat timelines and the remap: every timeline keeps its keys
    /// whatever its place, and short ones sorted by length fill groups.
    #[test]
    fn layout_keeps_every_timeline() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        let lens: Vec<usize> = (0..37)
            .map(|i| if i % 9 == 4 { 70 + i } else { 2 + (i * 7) % 40 })
            .collect();
        let arrays: Vec<Vec<f32>> = lens.iter().map(|&n| grid_times(&mut rng, n)).collect();
        let (tl, remap) = Timelines::build(&arrays).unwrap();
        assert_eq!(tl.len(), arrays.len());
        let short = lens.iter().filter(|&&n| n <= LANE_KEYS_MAX).count();
        assert_eq!(tl.groups.len(), short / LANES);
        for (old, a) in arrays.iter().enumerate() {
            let new = remap[old] as usize;
            assert_eq!(tl.key_count(new), a.len());
            for (k, &v) in a.iter().enumerate() {
                assert_eq!(tl.time(new, k), v);
            }
            let grouped = new < tl.groups.len() * LANES;
            assert_eq!(tl.keys[new].stride == LANES as u32, grouped);
            assert!(!grouped || a.len() <= LANE_KEYS_MAX);
        }
        // Within a group, lengths differ by little: sorted.
        for g in &tl.groups {
            assert!(g.lens.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    /// The seek index names, for each bucket, the last row at or before
    /// the bucket's start in every lane (so counting may start there), and
    /// no earlier one than that (so a jump skips every row it can): on
    /// evenly spread keys, bucket b of 16 over 31 keys starts past row
    /// 2b - 2. Ragged groups (members of different lengths, repeated
    /// keys) keep the first property.
    #[test]
    fn seek_index_names_the_last_row_before_each_bucket() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(23);
        let even: Vec<Vec<f32>> = (0..LANES)
            .map(|lane| {
                (0..31)
                    .map(|k| k as f32 / 30.0 + lane as f32 * 1e-3)
                    .collect()
            })
            .collect();
        let ragged: Vec<Vec<f32>> = (0..24)
            .map(|i| grid_times(&mut rng, 2 + (i * 7) % 40))
            .collect();
        for (arrays, is_even) in [(even, true), (ragged, false)] {
            let (tl, _) = Timelines::build(&arrays).unwrap();
            assert!(!tl.groups.is_empty());
            for g in &tl.groups {
                let rows = g.rows as usize;
                let row = |k: usize| &tl.times[g.at as usize + k * LANES..][..LANES];
                assert!(g.per > 0.0);
                for b in 0..SEEK_BUCKETS {
                    let start = g.t0 + b as f32 / g.per;
                    let at = g.starts[b] as usize;
                    assert!(at < rows);
                    let before = |k: usize| row(k).iter().all(|&v| v <= start);
                    // Row `at` is before the start in every lane (or it is
                    // row 0), and the next is not.
                    assert!(at == 0 || before(at), "bucket {b}: row {at}");
                    assert!(
                        at + 1 >= rows || !before(at + 1),
                        "bucket {b}: row {}",
                        at + 1
                    );
                    assert!(b == 0 || g.starts[b - 1] <= g.starts[b]);
                    // A time in the bucket maps to it.
                    let mid = g.t0 + (b as f32 + 0.5) / g.per;
                    assert_eq!(g.bucket(mid), b);
                    if is_even && b > 0 {
                        assert!(at + 2 >= 2 * b, "bucket {b} starts at row {at}");
                    }
                }
                assert_eq!(g.bucket(g.t0 - 1.0), 0);
                assert_eq!(g.bucket(f32::MAX), SEEK_BUCKETS - 1);
            }
        }
    }

    /// Every path (scalar with a fresh or stale cursor, the AVX2 group
    /// kernel) gives the definition's interval and fraction, bit for bit:
    /// `t` on keys, between them, on repeated keys, before and after.
    #[test]
    fn every_locate_is_the_definition() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(22);
        let arrays: Vec<Vec<f32>> = (0..48)
            .map(|i| {
                let n = 2 + (i * 5) % 63;
                grid_times(&mut rng, n)
            })
            .collect();
        let (tl, remap) = Timelines::build(&arrays).unwrap();
        assert!(!tl.groups.is_empty());
        let mut ts: Vec<f32> = (-4..48).map(|k| k as f32 * 0.125).collect();
        ts.extend((0..200).map(|_| rng.gen_range(-1.0..6.0f32)));
        let n = tl.len();
        // The AVX2 groups take the incoming intervals as a hint: carried
        // from the previous t (as a sampler does), fixed, past every row,
        // and random per lane.
        let mut carried = vec![0u32; n];
        for &t in &ts {
            let want: Vec<(u32, f32)> = (0..n)
                .map(|new| {
                    let old = remap.iter().position(|&r| r as usize == new).unwrap();
                    expected(&arrays[old], t)
                })
                .collect();
            for cursor0 in [0u32, 5, 1000] {
                let mut cursors = vec![cursor0; n];
                let (mut iv, mut fr) = (vec![0u32; n], vec![0.0f32; n]);
                locate_from::<false>(&tl, 0, t, &mut cursors, &mut iv, &mut fr);
                for k in 0..n {
                    assert_eq!(
                        (iv[k], fr[k].to_bits()),
                        (want[k].0, want[k].1.to_bits()),
                        "scalar tl {k} t {t}"
                    );
                }
            }
            #[cfg(target_arch = "x86_64")]
            if crate::anim::simd::avx2_fma() {
                let random: Vec<u32> = (0..n).map(|_| rng.gen_range(0..70)).collect();
                let hints = [
                    carried.clone(),
                    vec![9u32; n],
                    vec![1000u32; n],
                    vec![u32::MAX; n],
                    random,
                ];
                for (h, hint) in hints.into_iter().enumerate() {
                    let mut cursors = vec![3u32; n];
                    let (mut iv, mut fr) = (hint, vec![-1.0f32; n]);
                    // SAFETY: AVX2 checked.
                    unsafe { locate_all_avx2(&tl, t, &mut cursors, &mut iv, &mut fr) };
                    for k in 0..n {
                        assert_eq!(
                            (iv[k], fr[k].to_bits()),
                            (want[k].0, want[k].1.to_bits()),
                            "avx2 tl {k} t {t} hint {h}"
                        );
                    }
                    if h == 0 {
                        carried = iv;
                    }
                }
            }
        }
    }
}
