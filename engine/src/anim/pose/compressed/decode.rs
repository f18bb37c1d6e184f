//! Sampling a compressed clip's quantized tracks: the scalar definition
//! (a track at a time) and the choice of the AVX2 kernel (eight tracks at
//! a time, `simd::avx2::compressed`), tested against each other.
//!
//! A sample costs the same wherever it falls: the span holding `t` (one
//! unless the clip's curves jump), the interval `floor((t - start) /
//! step)` in it, its segment `interval / SEGMENT` after the span's
//! first, and each track's two kept samples around it (at its stride)
//! at bit offsets found by one pass over the segment's tracks; there is
//! no cursor.

use glam::Vec3;

use super::format::{
    dequantize, lerp3, locate_segment, nlerp4, place, quat_of, read_bits, samples_kept, stride_at,
    CompressedClip, SegmentTrack, ROTATION, SCALE,
};
use crate::anim::pose::soa::PoseSink;

/// Writes every quantized track of `p` at clip-local time `t` (wrapped or
/// clamped already) into `out`, which holds the clip's joints.
#[inline]
pub(crate) fn sample_packed<P: PoseSink + ?Sized>(p: &CompressedClip, t: f32, out: &mut P) {
    if p.tracks.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if crate::anim::simd::avx2_fma() && p.data.len() < AVX2_MAX_BYTES {
        // SAFETY: AVX2 and FMA checked; `p` was built by the compression
        // job or validated by the clip-file loader (every segment's
        // samples inside `data`, before its padding; every joint below
        // the joint count `out` holds, as the sampling job validated).
        unsafe { sample_packed_avx2(p, t, out) };
        return;
    }
    sample_packed_scalar(p, t, out);
}

/// Bit positions are `i32` lanes in the AVX2 kernel.
#[cfg(target_arch = "x86_64")]
const AVX2_MAX_BYTES: usize = 1 << 27;

/// [`sample_packed`] eight tracks at a time through
/// [`decode8`](crate::anim::simd::avx2::decode8): each lane's bit
/// position, rate and ranges gathered here, the arithmetic there; the
/// results are the scalar definition's, bit for bit.
///
/// # Safety
/// The CPU has AVX2 and FMA; `p` was built by the compression job or
/// validated by the clip-file loader, its data shorter than
/// `AVX2_MAX_BYTES`; every track's joint is inside `out`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn sample_packed_avx2<P: PoseSink + ?Sized>(
    p: &CompressedClip,
    t: f32,
    out: &mut P,
) {
    use super::format::{INV_255, INV_LEVELS};
    use crate::anim::simd::lanes::PackedLanes;
    let (s, k, u, n) = locate_segment(&p.spans, t);
    let nt = p.tracks.len();
    let mut pos = p.segments[s].data_at as usize * 8;
    let sts = &p.segment_tracks[s * nt..(s + 1) * nt];
    let mut base = 0;
    while base < nt {
        let lanes = (nt - base).min(8);
        let mut l = PackedLanes::default();
        for lane in 0..8 {
            let i = base + lane.min(lanes - 1);
            let st = &sts[i];
            let r = &p.ranges[i];
            let row = 3 * st.bits as usize;
            let (m, uu) = stride_at(k, u, st.shift);
            if lane < lanes {
                l.pos[lane] = (pos + m * row) as i32;
                pos += row * samples_kept(n, st.shift);
            } else {
                l.pos[lane] = l.pos[lanes - 1];
            }
            l.row[lane] = row as i32;
            l.u[lane] = uu;
            l.bits[lane] = i32::from(st.bits);
            l.inv_levels[lane] = INV_LEVELS[st.bits as usize];
            for c in 0..3 {
                l.seg_min[c][lane] = st.min[c] as f32 * INV_255;
                l.seg_ext[c][lane] = st.extent[c] as f32 * INV_255;
                l.clip_min[c][lane] = r[c];
                l.clip_ext[c][lane] = r[3 + c];
            }
        }
        // SAFETY: AVX2 and FMA enabled here; every lane's positions are
        // its track's samples in this segment, inside the bit stream
        // (built or validated so) with the stream's padding after them,
        // and below `AVX2_MAX_BYTES * 8`.
        let (v3, q4) = unsafe { crate::anim::simd::avx2::decode8(&p.data, &l) };
        for lane in 0..lanes {
            let tr = p.tracks[base + lane];
            let j = tr.joint as usize;
            match tr.channel {
                ROTATION => out.set_rotation(
                    j,
                    place(
                        glam::Quat::from_xyzw(q4[0][lane], q4[1][lane], q4[2][lane], q4[3][lane]),
                        sts[base + lane].largest,
                    ),
                ),
                SCALE => out.set_scale(j, Vec3::new(v3[0][lane], v3[1][lane], v3[2][lane])),
                _ => out.set_translation(j, Vec3::new(v3[0][lane], v3[1][lane], v3[2][lane])),
            }
        }
        base += 8;
    }
}

/// [`sample_packed`] a track at a time: the definition.
pub(crate) fn sample_packed_scalar<P: PoseSink + ?Sized>(p: &CompressedClip, t: f32, out: &mut P) {
    if p.tracks.is_empty() {
        return;
    }
    let (s, k, u0, n) = locate_segment(&p.spans, t);
    let nt = p.tracks.len();
    let mut pos = p.segments[s].data_at as usize * 8;
    for (i, st) in p.segment_tracks[s * nt..(s + 1) * nt].iter().enumerate() {
        let row = 3 * st.bits as usize;
        let (m, u) = stride_at(k, u0, st.shift);
        let a = decode(&p.data, pos + m * row, st, &p.ranges[i]);
        let b = decode(&p.data, pos + (m + 1) * row, st, &p.ranges[i]);
        pos += row * samples_kept(n, st.shift);
        let tr = p.tracks[i];
        let j = tr.joint as usize;
        match tr.channel {
            ROTATION => out.set_rotation(j, place(nlerp4(quat_of(a), quat_of(b), u), st.largest)),
            SCALE => out.set_scale(j, lerp3(a, b, u)),
            _ => out.set_translation(j, lerp3(a, b, u)),
        }
    }
}

/// One track's three components at bit `pos`.
#[inline(always)]
pub(crate) fn decode(data: &[u8], pos: usize, st: &SegmentTrack, range: &[f32; 6]) -> Vec3 {
    let b = st.bits as usize;
    let c = |i: usize| {
        let q = if b == 0 {
            0
        } else {
            read_bits(data, pos + i * b, st.bits)
        };
        dequantize(q, st.bits, st.min[i], st.extent[i], range[i], range[3 + i])
    };
    Vec3::new(c(0), c(1), c(2))
}
