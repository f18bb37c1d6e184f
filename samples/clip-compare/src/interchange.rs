//! The files clip-compare and `tools/ozz-compress` exchange: little-endian
//! binary, every count checked against the bytes left before allocating.
//!
//! Input (`VKOZIN01`), written here, read by ozz-compress:
//!
//! ```text
//! magic "VKOZIN01"
//! u32 joints; joints x { i32 parent (-1: root; parents come before children),
//!                        f32 translation[3], rotation[4] (x y z w), scale[3] }
//! u32 clips; clips x {
//!   u32 name bytes; name (UTF-8); f32 duration (s, > 0)
//!   joints x { translation, rotation, scale track: u32 keys;
//!              keys x f32 time (s, ascending); keys x f32 value[3 | 4 | 3] }
//!   u32 evaluations; evaluations x f32 time (s)
//!   f32 cached step (s); u32 seeks; seeks x f32 time (s)
//! }
//! ```
//!
//! Output (`VKOZOUT1`), written by ozz-compress, read here:
//!
//! ```text
//! magic "VKOZOUT1"
//! u32 clips; clips x {
//!   u64 runtime bytes (ozz's Animation::size()); u32 keys kept T, R, S
//!   f64 ns per joint, cached; f64 ns per joint, random seek
//!   u32 joints; u32 evaluations;
//!   evaluations x joints x f32 { translation[3], rotation[4] (x y z w), scale[3] }
//! }
//! ```

use vkskin::anim::Transform;
use vkskin::glam::{Quat, Vec3};

/// The skeleton as ozz-compress needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletonOut {
    /// Parent per joint, `None` for roots; parents come before children.
    pub parents: Vec<Option<usize>>,
    /// Bind-pose local transforms.
    pub bind: Vec<Transform>,
}

/// One channel's keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Keys<T> {
    pub times: Vec<f32>,
    pub values: Vec<T>,
}

/// One joint's translation, rotation and scale keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointKeys {
    pub translation: Keys<Vec3>,
    pub rotation: Keys<Quat>,
    pub scale: Keys<Vec3>,
}

/// One clip for ozz: dense keys, the times to sample it at, the timing
/// sequences.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipOut {
    pub name: String,
    pub duration: f32,
    /// One per skeleton joint.
    pub joints: Vec<JointKeys>,
    /// Times ozz samples and returns local transforms at.
    pub evaluations: Vec<f32>,
    /// The cached timing's time step.
    pub step: f32,
    /// The random-seek timing's times, in order.
    pub seeks: Vec<f32>,
}

/// What ozz-compress returns for one clip.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipBack {
    /// ozz's `Animation::size()`.
    pub bytes: u64,
    /// Keys the optimizer kept: translations, rotations, scales.
    pub keys: [u32; 3],
    pub ns_cached: f64,
    pub ns_seek: f64,
    /// Per evaluation time, the local transform of every joint.
    pub poses: Vec<Vec<Transform>>,
}

const MAGIC_IN: &[u8; 8] = b"VKOZIN01";
const MAGIC_OUT: &[u8; 8] = b"VKOZOUT1";

fn f32s(out: &mut Vec<u8>, v: &[f32]) {
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn u32le(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u32).to_le_bytes());
}

fn transform(out: &mut Vec<u8>, t: &Transform) {
    f32s(out, &t.translation.to_array());
    f32s(out, &t.rotation.to_array());
    f32s(out, &t.scale.to_array());
}

fn keys<T>(out: &mut Vec<u8>, k: &Keys<T>, value: impl Fn(&T) -> Vec<f32>) {
    u32le(out, k.times.len());
    f32s(out, &k.times);
    for v in &k.values {
        f32s(out, &value(v));
    }
}

/// The input file's bytes.
pub fn write_input(skeleton: &SkeletonOut, clips: &[ClipOut]) -> Vec<u8> {
    let mut out = MAGIC_IN.to_vec();
    u32le(&mut out, skeleton.parents.len());
    for (p, b) in skeleton.parents.iter().zip(&skeleton.bind) {
        out.extend_from_slice(&p.map_or(-1i32, |p| p as i32).to_le_bytes());
        transform(&mut out, b);
    }
    u32le(&mut out, clips.len());
    for c in clips {
        u32le(&mut out, c.name.len());
        out.extend_from_slice(c.name.as_bytes());
        f32s(&mut out, &[c.duration]);
        for j in &c.joints {
            keys(&mut out, &j.translation, |v| v.to_array().to_vec());
            keys(&mut out, &j.rotation, |v| v.to_array().to_vec());
            keys(&mut out, &j.scale, |v| v.to_array().to_vec());
        }
        u32le(&mut out, c.evaluations.len());
        f32s(&mut out, &c.evaluations);
        f32s(&mut out, &[c.step]);
        u32le(&mut out, c.seeks.len());
        f32s(&mut out, &c.seeks);
    }
    out
}

/// A reader over a file's bytes that names the file in its errors.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    file: &'a str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if n > self.bytes.len() - self.at {
            return Err(format!(
                "{}: truncated at byte {} ({what})",
                self.file, self.at
            ));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn f32(&mut self, what: &str) -> Result<f32, String> {
        Ok(f32::from_bits(self.u32(what)?))
    }
    fn f64(&mut self, what: &str) -> Result<f64, String> {
        Ok(f64::from_bits(self.u64(what)?))
    }
    /// A count of items of `item` bytes each, which must fit in the rest.
    fn count(&mut self, item: usize, what: &str) -> Result<usize, String> {
        let n = self.u32(what)? as usize;
        if item > 0 && n > (self.bytes.len() - self.at) / item {
            return Err(format!(
                "{}: {what} count {n} at byte {} exceeds the file",
                self.file,
                self.at - 4
            ));
        }
        Ok(n)
    }
    fn floats<const N: usize>(&mut self, what: &str) -> Result<[f32; N], String> {
        let mut a = [0.0; N];
        for v in &mut a {
            *v = self.f32(what)?;
        }
        Ok(a)
    }
    fn transform(&mut self, what: &str) -> Result<Transform, String> {
        let t = self.floats::<3>(what)?;
        let r = self.floats::<4>(what)?;
        let s = self.floats::<3>(what)?;
        Ok(Transform {
            translation: Vec3::from_array(t),
            rotation: Quat::from_array(r),
            scale: Vec3::from_array(s),
        })
    }
    fn magic(&mut self, magic: &[u8; 8]) -> Result<(), String> {
        let m = self.take(8, "magic")?;
        if m != magic {
            return Err(format!(
                "{}: magic is not {}",
                self.file,
                String::from_utf8_lossy(magic)
            ));
        }
        Ok(())
    }
    fn end(&self) -> Result<(), String> {
        if self.at != self.bytes.len() {
            return Err(format!(
                "{}: {} bytes after the last clip",
                self.file,
                self.bytes.len() - self.at
            ));
        }
        Ok(())
    }
    fn keys<T, const N: usize>(
        &mut self,
        value: impl Fn([f32; N]) -> T,
    ) -> Result<Keys<T>, String> {
        let n = self.count(4 * (1 + N), "key")?;
        let times = (0..n)
            .map(|_| self.f32("key time"))
            .collect::<Result<_, _>>()?;
        let values = (0..n)
            .map(|_| self.floats::<N>("key value").map(&value))
            .collect::<Result<_, _>>()?;
        Ok(Keys { times, values })
    }
}

/// Reads an input file (the round-trip test; ozz-compress has its own reader).
pub fn read_input(file: &str, bytes: &[u8]) -> Result<(SkeletonOut, Vec<ClipOut>), String> {
    let mut r = Reader { bytes, at: 0, file };
    r.magic(MAGIC_IN)?;
    let n = r.count(44, "joint")?;
    let mut skeleton = SkeletonOut {
        parents: Vec::with_capacity(n),
        bind: Vec::with_capacity(n),
    };
    for i in 0..n {
        let p = r.u32("parent")? as i32;
        if p >= i as i32 {
            return Err(format!(
                "{file}: joint {i}'s parent {p} does not come before it"
            ));
        }
        skeleton.parents.push((p >= 0).then_some(p as usize));
        skeleton.bind.push(r.transform("bind pose")?);
    }
    let clips = r.count(12, "clip")?;
    let mut out = Vec::with_capacity(clips);
    for _ in 0..clips {
        let len = r.count(1, "name byte")?;
        let name = String::from_utf8_lossy(r.take(len, "name")?).into_owned();
        let duration = r.f32("duration")?;
        let joints = (0..n)
            .map(|_| {
                Ok(JointKeys {
                    translation: r.keys(Vec3::from_array)?,
                    rotation: r.keys(Quat::from_array)?,
                    scale: r.keys(Vec3::from_array)?,
                })
            })
            .collect::<Result<_, String>>()?;
        let e = r.count(4, "evaluation time")?;
        let evaluations = (0..e)
            .map(|_| r.f32("evaluation time"))
            .collect::<Result<_, _>>()?;
        let step = r.f32("cached step")?;
        let s = r.count(4, "seek time")?;
        let seeks = (0..s)
            .map(|_| r.f32("seek time"))
            .collect::<Result<_, _>>()?;
        out.push(ClipOut {
            name,
            duration,
            joints,
            evaluations,
            step,
            seeks,
        });
    }
    r.end()?;
    Ok((skeleton, out))
}

/// An output file's bytes (the round-trip test; ozz-compress writes the real ones).
pub fn write_output(clips: &[ClipBack]) -> Vec<u8> {
    let mut out = MAGIC_OUT.to_vec();
    u32le(&mut out, clips.len());
    for c in clips {
        out.extend_from_slice(&c.bytes.to_le_bytes());
        for k in c.keys {
            out.extend_from_slice(&k.to_le_bytes());
        }
        out.extend_from_slice(&c.ns_cached.to_le_bytes());
        out.extend_from_slice(&c.ns_seek.to_le_bytes());
        u32le(&mut out, c.poses.first().map_or(0, Vec::len));
        u32le(&mut out, c.poses.len());
        for p in &c.poses {
            for t in p {
                transform(&mut out, t);
            }
        }
    }
    out
}

/// Reads ozz-compress's output.
pub fn read_output(file: &str, bytes: &[u8]) -> Result<Vec<ClipBack>, String> {
    let mut r = Reader { bytes, at: 0, file };
    r.magic(MAGIC_OUT)?;
    let clips = r.count(40, "clip")?;
    let mut out = Vec::with_capacity(clips);
    for _ in 0..clips {
        let bytes = r.u64("bytes")?;
        let keys = [r.u32("keys")?, r.u32("keys")?, r.u32("keys")?];
        let ns_cached = r.f64("cached ns")?;
        let ns_seek = r.f64("seek ns")?;
        let joints = r.u32("joints")? as usize;
        let evals = r.u32("evaluations")? as usize;
        if joints.saturating_mul(evals).saturating_mul(40) > bytes_left(&r) {
            return Err(format!(
                "{file}: {evals} poses of {joints} joints exceed the file"
            ));
        }
        let poses = (0..evals)
            .map(|_| {
                (0..joints)
                    .map(|_| r.transform("pose"))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        out.push(ClipBack {
            bytes,
            keys,
            ns_cached,
            ns_seek,
            poses,
        });
    }
    r.end()?;
    Ok(out)
}

fn bytes_left(r: &Reader) -> usize {
    r.bytes.len() - r.at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(x: f32) -> Transform {
        Transform {
            translation: Vec3::new(x, -x, 0.5),
            rotation: Quat::from_rotation_y(x).normalize(),
            scale: Vec3::new(1.0, 2.0, x),
        }
    }

    #[test]
    fn input_round_trip() {
        let skeleton = SkeletonOut {
            parents: vec![None, Some(0), Some(1), Some(0)],
            bind: (0..4).map(|i| t(i as f32 * 0.3)).collect(),
        };
        let joint = |k: usize| JointKeys {
            translation: Keys {
                times: (0..k).map(|i| i as f32 * 0.1).collect(),
                values: (0..k).map(|i| Vec3::splat(i as f32)).collect(),
            },
            rotation: Keys {
                times: vec![0.0],
                values: vec![Quat::from_rotation_x(0.25)],
            },
            scale: Keys::default(),
        };
        let clips = vec![
            ClipOut {
                name: "walk ü".into(),
                duration: 1.5,
                joints: (0..4).map(joint).collect(),
                evaluations: vec![0.0, 0.25, 1.5],
                step: 1.0 / 60.0,
                seeks: vec![0.7, 0.1],
            },
            ClipOut {
                name: String::new(),
                duration: 0.5,
                joints: (0..4).map(|j| joint(3 - j)).collect(),
                evaluations: vec![],
                step: 0.01,
                seeks: vec![0.2],
            },
        ];
        let bytes = write_input(&skeleton, &clips);
        let (s, c) = read_input("in", &bytes).expect("read back");
        assert_eq!(s, skeleton);
        assert_eq!(c, clips);
        assert_eq!(write_input(&s, &c), bytes);
        // Truncated anywhere: an error, never a panic.
        for cut in 0..bytes.len() {
            assert!(read_input("in", &bytes[..cut]).is_err(), "cut at {cut}");
        }
        // A huge key count is refused before allocating.
        let mut bad = bytes.clone();
        let at = 8 + 4 + 4 * 44 + 4 + 4 + "walk ü".len() + 4;
        bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = read_input("in", &bad).expect_err("huge count");
        assert!(e.contains("key count"), "{e}");
    }

    #[test]
    fn output_round_trip() {
        let clips = vec![
            ClipBack {
                bytes: 12_345,
                keys: [3, 40, 2],
                ns_cached: 4.25,
                ns_seek: 17.5,
                poses: (0..3)
                    .map(|e| (0..5).map(|j| t((e * 5 + j) as f32)).collect())
                    .collect(),
            },
            ClipBack {
                bytes: 0,
                keys: [0; 3],
                ns_cached: 0.0,
                ns_seek: f64::INFINITY,
                poses: vec![],
            },
        ];
        let bytes = write_output(&clips);
        assert_eq!(read_output("out", &bytes).expect("read back"), clips);
        for cut in 0..bytes.len() {
            assert!(read_output("out", &bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(read_output("out", &long).is_err());
    }
}
