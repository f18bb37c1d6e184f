//! `inspect FILE`: prints a model — joint tree, skins, meshes with their
//! morph targets, morph weight sets, influence histogram, clips with key
//! counts and interpolations (and their morph-weight channels), materials,
//! loader warnings.
//!
//! `inspect FILE --dump-skinned [--clip C] [--time T] [--weights W,..]
//! [--path P] --out F.json` writes the morphed and skinned model-space
//! positions and normals of every mesh primitive, in the model's mesh
//! order, posed by clip `C` (name or index; the bind pose when absent) at
//! `T` seconds (looping), through the CPU reference (`--path cpu`, the
//! default: `MorphJob` then linear blend skinning) or a GPU path. The morph
//! weights are the clip's at `T` (the model's defaults without a clip), or
//! `--weights` (the whole weight vector, comma-separated); the JSON holds
//! them as `weights`.
//!
//! `inspect FILE --compress [--tolerance MM@CM] --out F.vkclip` compresses
//! every clip of the model (`CompressionJob`, default tolerance 1 mm at
//! 10 cm, ozz's), writes the skeleton and the compressed clips as a clip
//! file, and prints per clip its bytes (in memory and in the file) beside
//! the raw f32 size of its keys, the ratio, and the error measured by the
//! tolerance's metric at every key time, key-interval middle and 1,000
//! evenly spread times (worst and 99th percentile).
//!
//! `FILE` may be `builtin:morph`, the engine's morph-target demo
//! (`assets::builtin::MorphBlob`), or `builtin:character`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use glam::Vec3;
use serde::Serialize;
use vkskin::anim::PaletteHierarchy;
use vkskin::anim::{PlaybackMode, Transform};
use vkskin::assets::gltf::GltfInfo;
use vkskin::assets::{LoadOptions, Model};
use vkskin::gpu::{Device, DeviceDesc, Instance, InstanceDesc, MessageLog};
use vkskin::render::SkinCapture;
use vkskin::skin::PathDesc;

#[derive(Parser, Debug)]
#[command(about = "Inspect a glTF/GLB/.x model, or dump its skinned vertices")]
struct Args {
    /// The model file (.gltf, .glb, .x).
    file: PathBuf,
    /// Influences kept per vertex (1..=8).
    #[arg(long, default_value_t = 4)]
    max_influences: usize,
    /// Write skinned positions and normals as JSON instead of printing.
    #[arg(long)]
    dump_skinned: bool,
    /// Clip name or index (default: the bind pose).
    #[arg(long)]
    clip: Option<String>,
    /// Seconds into the clip (wraps past its end).
    #[arg(long, default_value_t = 0.0)]
    time: f32,
    /// The model's morph weights, comma-separated (all of them), instead
    /// of the clip's at --time.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    weights: Option<Vec<f32>>,
    /// Skinning path: cpu (the CPU reference), or a GPU path by name (see
    /// the error message for the list), skinned in capture mode.
    #[arg(long, default_value = "cpu")]
    path: String,
    /// GPU for --path: index or name substring (default: $VKSKIN_DEVICE,
    /// then discrete > integrated > CPU).
    #[arg(long)]
    device: Option<String>,
    /// Output JSON file for --dump-skinned, clip file for --compress.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Compress the clips and write a clip file (--out F.vkclip).
    #[arg(long)]
    compress: bool,
    /// --compress tolerance: millimetres at centimetres from each joint.
    #[arg(long, default_value = "1@10")]
    tolerance: String,
}

/// The skinning paths `--path` knows: the CPU reference (linear blend
/// skinning) or any path of the engine's registry.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SkinPath {
    Cpu,
    Gpu(&'static PathDesc),
}

fn parse_path(p: &str) -> Result<SkinPath, String> {
    let p = p.to_ascii_lowercase();
    if p == "cpu" {
        return Ok(SkinPath::Cpu);
    }
    if let Some(desc) = vkskin::skin::find(&p) {
        return Ok(SkinPath::Gpu(desc));
    }
    let names: Vec<&str> = std::iter::once("cpu")
        .chain(vkskin::skin::paths().iter().map(|d| d.name))
        .collect();
    Err(format!(
        "unknown skinning path {p:?}; known: {}",
        names.join(", ")
    ))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("inspect: {e}");
            ExitCode::FAILURE
        }
    }
}

fn is_gltf(p: &Path) -> bool {
    matches!(
        p.extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref(),
        Some("gltf" | "glb")
    )
}

/// The built-in models `builtin:NAME` opens.
fn builtin(name: &str) -> Result<Model, String> {
    match name {
        "morph" => Ok(vkskin::assets::builtin::MorphBlob::default().model()),
        "character" => Ok(vkskin::assets::builtin::Character::model()),
        _ => Err(format!(
            "unknown built-in model {name:?}; known: morph, character"
        )),
    }
}

fn run(args: &Args) -> Result<(), String> {
    let options = LoadOptions {
        max_influences: args.max_influences,
        ..LoadOptions::default()
    };
    let (model, info) =
        if let Some(name) = args.file.to_str().and_then(|f| f.strip_prefix("builtin:")) {
            (builtin(name)?, None)
        } else if is_gltf(&args.file) {
            let (m, i) = vkskin::assets::gltf::load_with_info(&args.file, &options)
                .map_err(|e| e.to_string())?;
            (m, Some(i))
        } else {
            (
                vkskin::assets::load_with(&args.file, &options).map_err(|e| e.to_string())?,
                None,
            )
        };
    if args.compress {
        return compress(&model, args);
    }
    if args.dump_skinned {
        let path = parse_path(&args.path)?;
        let out = args
            .out
            .as_ref()
            .ok_or("--dump-skinned needs --out FILE.json")?;
        let dump = dump_skinned(&model, args, path)?;
        let text = serde_json::to_string(&dump).map_err(|e| e.to_string())?;
        std::fs::write(out, text).map_err(|e| format!("{}: {e}", out.display()))?;
        eprintln!(
            "inspect: wrote {} primitives to {}",
            dump.primitives.len(),
            out.display()
        );
        return Ok(());
    }
    // A closed pipe (`inspect F | head`) is not an error worth a panic.
    use std::io::Write as _;
    let _ = std::io::stdout().write_all(describe(&model, info.as_ref()).as_bytes());
    Ok(())
}

/// The human-readable report.
fn describe(model: &Model, info: Option<&GltfInfo>) -> String {
    let mut s = String::new();
    let src = model
        .source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let _ = writeln!(s, "model {:?} ({src})", model.name);
    let sk = &model.skeleton;
    let _ = writeln!(s, "\njoints: {}", sk.len());
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); sk.len()];
    let mut roots = Vec::new();
    for j in 0..sk.len() {
        match sk.parent(j) {
            Some(p) => children[p].push(j),
            None => roots.push(j),
        }
    }
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((j, depth)) = stack.pop() {
        let b = &sk.bind_local()[j];
        let _ = writeln!(
            s,
            "  {:indent$}[{j}] {}  t={:?}",
            "",
            sk.names()[j],
            b.translation.to_array(),
            indent = depth * 2
        );
        for &c in children[j].iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    let _ = writeln!(s, "\nskins: {}", model.skins.len());
    for (i, skin) in model.skins.iter().enumerate() {
        let kind = match info {
            Some(inf) if i >= inf.file_skins => " (rigid)",
            _ => "",
        };
        let _ = writeln!(
            s,
            "  [{i}] {:?}{kind}: {} joints",
            skin.name,
            skin.joints.len()
        );
    }
    let _ = writeln!(
        s,
        "\nmeshes: {} ({} vertices)",
        model.meshes.len(),
        model.vertex_count()
    );
    let mut histogram: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, m) in model.meshes.iter().enumerate() {
        let from = info
            .and_then(|inf| inf.mesh_sources.get(i))
            .map(|src| {
                format!(
                    " node {} mesh {} primitive {}",
                    src.node, src.mesh, src.primitive
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  [{i}] {:?}{from}: {} vertices, {} triangles, skin {}, {} influence slots, material {}",
            m.name,
            m.vertex_count(),
            m.triangle_count(),
            m.skin,
            m.influences.per_vertex,
            m.material.map_or("-".to_string(), |x| x.to_string())
        );
        describe_morph(&mut s, model, m);
        for v in 0..m.influences.vertex_count() {
            let (_, w) = m.influences.vertex(v);
            *histogram
                .entry(w.iter().filter(|&&x| x > 0.0).count())
                .or_default() += 1;
        }
    }
    let _ = writeln!(
        s,
        "\nmorph weight sets: {} ({} weights)",
        model.morph_sets.len(),
        model.morph_weight_count()
    );
    for (i, set) in model.morph_sets.iter().enumerate() {
        let _ = writeln!(
            s,
            "  [{i}] {:?}: weights {}..{}, defaults {:?}",
            set.name,
            set.first_weight,
            set.first_weight + set.defaults.len(),
            set.defaults
        );
    }
    let _ = writeln!(s, "\ninfluences per vertex (after normalisation):");
    for (k, n) in &histogram {
        let _ = writeln!(s, "  {k}: {n} vertices");
    }
    let _ = writeln!(s, "\nclips: {}", model.clips.len());
    for (i, c) in model.clips.iter().enumerate() {
        let _ = writeln!(
            s,
            "  [{i}] {:?}: {:.3} s, {} tracks",
            c.name(),
            c.duration(),
            c.track_count()
        );
        for t in c.track_infos() {
            let _ = writeln!(
                s,
                "      {} {}: {} keys {:?}, {:.3}..{:.3} s",
                sk.names().get(t.joint).map_or("?", |n| n.as_str()),
                t.channel.name(),
                t.keys,
                t.interpolation,
                t.start,
                t.end
            );
        }
        for w in c.weight_tracks() {
            let set = model
                .morph_sets
                .iter()
                .find(|set| set.first_weight == w.first)
                .map_or(String::new(), |set| format!(" (set {:?})", set.name));
            let _ = writeln!(
                s,
                "      morph weights{set}: first {}, count {}, {} keys {:?}, {:.3}..{:.3} s",
                w.first, w.count, w.keys, w.interpolation, w.start, w.end
            );
        }
    }

    let _ = writeln!(s, "\nmaterials: {}", model.materials.len());
    for (i, m) in model.materials.iter().enumerate() {
        let tex = match &m.texture {
            None => "no texture".to_string(),
            Some(vkskin::assets::TextureSource::File(p)) => format!("texture {}", p.display()),
            Some(vkskin::assets::TextureSource::Embedded { mime, bytes }) => {
                format!("embedded {mime} texture, {} bytes", bytes.len())
            }
        };
        let _ = writeln!(
            s,
            "  [{i}] {:?}: base colour {:?}, {tex}",
            m.name,
            m.base_color.to_array()
        );
    }
    let _ = writeln!(s, "\nwarnings: {}", model.warnings.len());
    for w in &model.warnings {
        let _ = writeln!(s, "  {w}");
    }
    s
}

/// A mesh's morph targets, one line each: name, attributes, storage.
fn describe_morph(s: &mut String, model: &Model, m: &vkskin::mesh::SkinnedMesh) {
    if m.morph.is_empty() {
        return;
    }
    let set = model.morph_sets.iter().find(|set| {
        set.first_weight == m.morph.first_weight && set.defaults.len() == m.morph.len()
    });
    let _ = writeln!(
        s,
        "      morph targets: {}, weights from {}{}",
        m.morph.len(),
        m.morph.first_weight,
        set.map_or(String::new(), |set| format!(" (set {:?})", set.name))
    );
    for (t, target) in m.morph.targets.iter().enumerate() {
        let attrs: Vec<&str> = [
            ("POSITION", &target.positions),
            ("NORMAL", &target.normals),
            ("TANGENT", &target.tangents),
        ]
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(a, _)| *a)
        .collect();
        let name = set
            .and_then(|set| set.target_names.get(t))
            .map_or("", |n| n.as_str());
        let _ = writeln!(
            s,
            "        [{t}] {name:?}: {}, {}",
            if attrs.is_empty() {
                "no attributes".to_string()
            } else {
                attrs.join(" ")
            },
            if target.sparse { "sparse" } else { "dense" }
        );
    }
}

#[derive(Serialize)]
struct Dump {
    file: String,
    clip: Option<String>,
    time: f32,
    weights: Vec<f32>,
    path: String,
    primitives: Vec<DumpPrimitive>,
}

#[derive(Serialize)]
struct DumpPrimitive {
    mesh: String,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
}

/// Poses the model (clip at time, or bind pose) and skins every mesh.
fn dump_skinned(model: &Model, args: &Args, path: SkinPath) -> Result<Dump, String> {
    let clip = match &args.clip {
        None => None,
        Some(c) => Some(
            model
                .clip(c)
                .or_else(|| c.parse::<usize>().ok().and_then(|i| model.clips.get(i)))
                .ok_or_else(|| {
                    let names: Vec<_> = model.clips.iter().map(|c| c.name()).collect();
                    format!("no clip {c:?}; the model has {names:?}")
                })?,
        ),
    };
    let locals = model
        .pose(clip, args.time, PlaybackMode::Loop)
        .map_err(|e| e.to_string())?;
    let weights = match &args.weights {
        Some(w) if w.len() != model.morph_weight_count() => {
            return Err(format!(
                "--weights gives {} weights; the model has {}",
                w.len(),
                model.morph_weight_count()
            ))
        }
        Some(w) => w.clone(),
        None => model
            .morph_weights(clip, args.time, PlaybackMode::Loop)
            .map_err(|e| e.to_string())?,
    };
    let clip = clip.map(|c| c.name().to_string());
    let skinned = match path {
        SkinPath::Cpu => skin_cpu(model, &locals, &weights)?,
        SkinPath::Gpu(desc) => skin_gpu(model, &locals, &weights, desc, args.device.as_deref())?,
    };
    let primitives = skinned
        .into_iter()
        .zip(&model.meshes)
        .map(|((p, n), m)| DumpPrimitive {
            mesh: m.name.clone(),
            positions: p.iter().map(|v| v.to_array()).collect(),
            normals: n.iter().map(|v| v.to_array()).collect(),
        })
        .collect();
    Ok(Dump {
        file: args.file.display().to_string(),
        clip,
        time: args.time,
        weights,
        path: match path {
            SkinPath::Cpu => "cpu".into(),
            SkinPath::Gpu(desc) => desc.name.into(),
        },
        primitives,
    })
}

type Skinned = (Vec<Vec3>, Vec<Vec3>);

/// Every mesh skinned on the GPU through path `desc` in capture mode
/// (the CPU stage's paths run their CPU job and capture what the plain
/// pipeline draws). Validation
/// follows the engine's default (on in debug builds, or with
/// VKSKIN_VALIDATION=1); any validation warning or error fails the dump.
fn skin_gpu(
    model: &Model,
    locals: &[Transform],
    weights: &[f32],
    desc: &'static PathDesc,
    device: Option<&str>,
) -> Result<Vec<Skinned>, String> {
    let palettes = model.skin_matrices(locals).map_err(|e| e.to_string())?;
    let instance = Instance::new(&InstanceDesc {
        app_name: "inspect".into(),
        ..InstanceDesc::default()
    })
    .map_err(|e| format!("Vulkan instance: {e}"))?;
    let log = instance.messages().clone();
    let out = {
        let device = Device::new(
            &instance,
            &DeviceDesc {
                selector: device,
                surface: None,
            },
        )
        .map_err(|e| format!("Vulkan device: {e}"))?;
        let mut rig = SkinCapture::new(&device, desc, None)
            .map_err(|e| format!("{} path: {e}", desc.name))?;
        let mut out = Vec::with_capacity(model.meshes.len());
        for m in &model.meshes {
            let palette = palettes
                .get(m.skin)
                .ok_or_else(|| format!("mesh {:?} names skin {}", m.name, m.skin))?;
            let skin = model
                .skins
                .get(m.skin)
                .ok_or_else(|| format!("mesh {:?} names skin {}", m.name, m.skin))?;
            let hierarchy =
                PaletteHierarchy::new(skin, &model.skeleton).map_err(|e| e.to_string())?;
            let fail =
                |e: vkskin::gpu::GpuError| format!("mesh {:?} through {}: {e}", m.name, desc.name);
            let prepared = rig.prepare(m, &hierarchy).map_err(fail)?;
            let captured = if m.morph.is_empty() {
                rig.run(&prepared, &[palette])
            } else {
                let w = mesh_weights(m, weights)?;
                rig.run_morphed(&prepared, &[palette], &[w])
            }
            .map_err(fail)?
            .0;
            out.push((
                captured.iter().map(|v| v.position()).collect(),
                captured.iter().map(|v| v.normal()).collect(),
            ));
        }
        out
    };
    let problems = log.problems();
    if !problems.is_empty() {
        return Err(format!(
            "the validation layer reported {} problem(s):\n{}",
            problems.len(),
            MessageLog::format(&problems)
        ));
    }
    Ok(out)
}

/// A mesh's slice of the model's weight vector.
fn mesh_weights<'a>(
    m: &vkskin::mesh::SkinnedMesh,
    weights: &'a [f32],
) -> Result<&'a [f32], String> {
    m.morph.weights(weights).ok_or_else(|| {
        format!(
            "mesh {:?} reads weights {}..{}, the model has {}",
            m.name,
            m.morph.first_weight,
            m.morph.first_weight + m.morph.len(),
            weights.len()
        )
    })
}

/// CPU reference of every mesh for one pose: morphed by `weights`
/// (`MorphJob`), then linear blend skinning.
fn skin_cpu(model: &Model, locals: &[Transform], weights: &[f32]) -> Result<Vec<Skinned>, String> {
    let mut morphed = model.clone();
    for m in &mut morphed.meshes {
        if m.morph.is_empty() {
            continue;
        }
        let w = mesh_weights(m, weights)?;
        let n = m.positions.len();
        let mut positions = vec![Vec3::ZERO; n];
        let mut normals = vec![Vec3::ZERO; m.normals.len()];
        vkskin::mesh::MorphJob {
            targets: &m.morph.targets,
            weights: w,
            positions: &m.positions,
            normals: &m.normals,
            tangents: &[],
            out_positions: &mut positions,
            out_normals: &mut normals,
            out_tangents: &mut [],
        }
        .run()
        .map_err(|e| format!("mesh {:?}: {e}", m.name))?;
        m.positions = positions;
        m.normals = normals;
        m.morph = Default::default();
    }
    Ok(morphed
        .skin_cpu(locals)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|v| (v.positions, v.normals))
        .collect())
}

/// What a clip's keys cost as f32: per track, keys times its components
/// (4 for a rotation, 3 for a vector, 10 for a matrix), 4 bytes each.
fn raw_f32_bytes(clip: &vkskin::anim::Clip) -> usize {
    use vkskin::anim::Channel;
    clip.track_infos()
        .iter()
        .map(|t| {
            let c = match t.channel {
                Channel::Rotation => 4,
                Channel::Translation | Channel::Scale => 3,
                Channel::Matrix => 10,
            };
            t.keys * c * 4
        })
        .sum()
}

fn compress(model: &Model, args: &Args) -> Result<(), String> {
    use vkskin::anim::{measure_errors, ClipFile, CompressionJob, Tolerance};
    let out = args
        .out
        .as_ref()
        .ok_or("--compress needs --out FILE.vkclip")?;
    let tol = Tolerance::parse_mm_at_cm(&args.tolerance)
        .ok_or_else(|| format!("--tolerance {:?}: expected MM@CM, say 1@10", args.tolerance))?;
    let joints = model.skeleton.len().max(1);
    println!(
        "{}: {} joints, tolerance {} mm at {} cm",
        args.file.display(),
        model.skeleton.len(),
        tol.error * 1000.0,
        tol.distance * 100.0
    );
    println!(
        "{:<24} {:>7} {:>9} {:>9} {:>9} {:>7} {:>7} {:>6} {:>9} {:>9}",
        "clip",
        "seconds",
        "raw f32",
        "memory",
        "file",
        "ratio",
        "B/joint",
        "Hz",
        "worst mm",
        "p99 mm"
    );
    let mut clips = Vec::new();
    let (mut raw_total, mut mem_total, mut file_total) = (0usize, 0usize, 0usize);
    let mut worst_total = 0.0f32;
    for clip in &model.clips {
        let c = CompressionJob {
            clip,
            skeleton: &model.skeleton,
            tolerance: tol,
        }
        .run()
        .map_err(|e| format!("{}: {e}", clip.name()))?;
        // Key times and middles of the clip's tracks, and 1,000 times.
        let d = clip.duration();
        let mut times: Vec<f32> = (0..1000).map(|k| d * k as f32 / 1000.0).collect();
        for t in clip.track_infos() {
            times.push(t.start);
            times.push(0.5 * (t.start + t.end));
        }
        let mut errs = measure_errors(clip, &c, &model.skeleton, &times, tol.distance)
            .map_err(|e| e.to_string())?;
        errs.sort_by(f32::total_cmp);
        let worst = errs
            .last()
            .copied()
            .unwrap_or(0.0)
            .max(c.compressed().map_or(0.0, |p| p.measured_error()));
        let p99 = errs.get(errs.len() * 99 / 100).copied().unwrap_or(0.0);
        let one = ClipFile {
            skeleton: model.skeleton.clone(),
            clips: vec![c.clone()],
        };
        let skel_only = ClipFile {
            skeleton: model.skeleton.clone(),
            clips: Vec::new(),
        };
        let file_bytes = one.to_bytes()?.len() - skel_only.to_bytes()?.len();
        let raw = raw_f32_bytes(clip);
        let rate = c.compressed().map_or(0.0, |p| p.sample_rate());
        println!(
            "{:<24} {:>7.2} {:>9} {:>9} {:>9} {:>6.1}x {:>7.0} {:>6.0} {:>9.4} {:>9.4}",
            clip.name(),
            d,
            raw,
            c.bytes(),
            file_bytes,
            raw as f32 / c.bytes().max(1) as f32,
            c.bytes() as f32 / joints as f32,
            rate,
            worst * 1000.0,
            p99 * 1000.0
        );
        let parts = vkskin::anim::bytes_breakdown(&c);
        let listed: Vec<String> = parts
            .iter()
            .filter(|p| p.1 > 0)
            .map(|(what, b)| format!("{what} {b}"))
            .collect();
        println!("    bytes: {}", listed.join(", "));
        raw_total += raw;
        mem_total += c.bytes();
        file_total += file_bytes;
        worst_total = worst_total.max(worst);
        clips.push(c);
    }
    println!(
        "{:<24} {:>7} {:>9} {:>9} {:>9} {:>6.1}x {:>7.0} {:>6} {:>9.4}",
        "total",
        "",
        raw_total,
        mem_total,
        file_total,
        raw_total as f32 / mem_total.max(1) as f32,
        mem_total as f32 / joints as f32,
        "",
        worst_total * 1000.0
    );
    let file = ClipFile {
        skeleton: model.skeleton.clone(),
        clips,
    };
    file.save(out).map_err(|e| e.to_string())?;
    eprintln!("inspect: wrote {}", out.display());
    Ok(())
}
