//! `--gpu-anim`: the crowd animated on the GPU (`skin::anim`): per path
//! and instance count, the GPU time of the animation passes alone and of
//! animation + skinning + draw (timestamps around them), the host's time
//! to write the records, and the bytes the host writes per frame (the
//! 32-byte animation records and the 64-byte instance records) against
//! the CPU path's (the palettes and the instance records). Writes
//! `gpu-anim.csv` to `--out` and prints a Markdown table.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use glam::Affine3A;
use vkskin::anim::PaletteHierarchy;
use vkskin::assets::Model;
use vkskin::gpu::{vk, Device, GpuError, TimestampQueries};
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget};
use vkskin::skin::anim::{crowd_records, AnimRecord, GpuAnimator, GpuClipStore};
use vkskin::skin::{FrameSets, FrameUniforms, InstanceRecord, PathDesc, SkinPath, SkinPathConfig};

use crate::{bench_crowd, median, Args};

/// One path at one count.
pub struct Row {
    pub path: &'static str,
    pub instances: usize,
    /// `Err`: the limit or fault that stopped the case.
    pub result: Result<Figures, String>,
}

/// Medians over a case's timed frames.
pub struct Figures {
    pub frames: usize,
    /// The animation passes alone; `None` without timestamps.
    pub anim_gpu_ms: Option<f64>,
    /// Animation, skinning and the draw.
    pub total_gpu_ms: Option<f64>,
    /// Writing the animation and instance records on the host.
    pub host_ms: f64,
    /// Bytes the host writes a frame with GPU animation.
    pub gpu_bytes: usize,
    /// Bytes it writes with CPU animation (palettes and instance records).
    pub cpu_bytes: usize,
}

/// Runs every path of `descs` at every count of `--instances`.
pub fn run(
    args: &Args,
    device: &Arc<Device>,
    model: &Model,
    descs: &[&'static PathDesc],
    device_name: &str,
) -> Result<(), String> {
    let skin = &model.skins[model.meshes[0].skin];
    let hierarchy = PaletteHierarchy::new(skin, &model.skeleton).map_err(|e| e.to_string())?;
    let store = Arc::new(
        GpuClipStore::new(device, &model.skeleton, &model.clips).map_err(|e| e.to_string())?,
    );
    let target = OffscreenTarget::new(device, args.size, args.size).map_err(|e| e.to_string())?;
    let timer = TimestampQueries::new(device, 3).ok();
    let b = model
        .animated_bounds(4)
        .map_err(|e| format!("bench character bounds: {e}"))?;
    println!(
        "gpu-bench --gpu-anim: {} path(s) x {:?} instances of a {}-vertex, {}-joint character on {device_name}; clip store {} bytes",
        descs.len(),
        args.instances,
        model.meshes[0].vertex_count(),
        model.skeleton.len(),
        store.bytes()
    );
    let mut rows = Vec::new();
    for &desc in descs {
        let mut cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            1,
        );
        cfg.gpu_animation = true;
        let built = SkinPath::new(device, desc, cfg).and_then(|mut path| {
            let mesh = path.prepare(&model.meshes[0], &hierarchy)?;
            let animator = GpuAnimator::new(&store, &path, &mesh, skin)?;
            Ok((path, mesh, animator))
        });
        let (mut path, mesh, mut animator) = match built {
            Ok(b) => b,
            Err(e) => {
                for &n in &args.instances {
                    rows.push(Row {
                        path: desc.name,
                        instances: n,
                        result: Err(e.to_string()),
                    });
                }
                continue;
            }
        };
        let mut frame_sets = FrameSets::new(device, 1).map_err(|e| e.to_string())?;
        let mut frames = FramesInFlight::new(device, 1).map_err(|e| e.to_string())?;
        for &n in &args.instances {
            let crowd = bench_crowd(model, n)?;
            let columns = (n as f64).sqrt().ceil() as usize;
            let spacing = 2.2 * (b.max - b.min).x.max((b.max - b.min).z) * 0.5;
            let place: Vec<Affine3A> = (0..n)
                .map(|i| {
                    Affine3A::from_translation(glam::Vec3::new(
                        (i % columns) as f32 * spacing,
                        0.0,
                        (i / columns) as f32 * spacing,
                    ))
                })
                .collect();
            let far = glam::Vec3::new(
                columns as f32 * spacing,
                0.0,
                n.div_ceil(columns) as f32 * spacing,
            );
            let camera = Camera::framing(b.min, b.max + far, 0.6, 0.5, 40f32.to_radians(), 1.0);
            let mut records: Vec<AnimRecord> = Vec::with_capacity(n);
            let (mut anim, mut total, mut host) = (Vec::new(), Vec::new(), Vec::new());
            let mut stride = 0;
            let mut failed = None;
            let started = Instant::now();
            for f in 0..=args.frames {
                let t = f as f32 / 60.0;
                let result = (|| -> Result<(), GpuError> {
                    let frame = frames.begin()?;
                    let idx = frame.index;
                    path.begin_frame(idx)?;
                    animator.begin_frame(idx)?;
                    let start = Instant::now();
                    crowd_records(&crowd, t, &mut records);
                    let recorded = (|| -> Result<(), GpuError> {
                        let mut w = path.batch(idx, &mesh, n)?;
                        let batch = w.batch();
                        stride = batch.palette_stride();
                        w.write_records(|i| (place[i], [1.0; 4]))?;
                        if f > 0 {
                            host.push(start.elapsed().as_secs_f64() * 1e3);
                        }
                        frame_sets.write(
                            idx,
                            &FrameUniforms {
                                view_proj: camera
                                    .view_proj(target.aspect_ratio())
                                    .to_cols_array_2d(),
                                color: [0.8, 0.75, 0.6, 1.0],
                                light: [0.35, 0.85, 0.45, 1.0],
                            },
                        )?;
                        let all = vk::PipelineStageFlags2::ALL_COMMANDS;
                        if let Some(q) = &timer {
                            q.reset(frame.cmd);
                            q.write(frame.cmd, 0, all);
                        }
                        animator.record(frame.cmd, &path, idx, &batch, &records, 0.0)?;
                        if let Some(q) = &timer {
                            q.write(frame.cmd, 1, all);
                        }
                        path.prepass(frame.cmd, idx, &[(&batch, &mesh)])?;
                        target.begin(frame.cmd, crate::CLEAR);
                        let drawn = path.record_draw(
                            frame.cmd,
                            idx,
                            &frame_sets,
                            &batch,
                            &mesh,
                            vk::PolygonMode::FILL,
                            None,
                        );
                        target.end_and_copy(frame.cmd);
                        drawn?;
                        path.finish(frame.cmd, idx)?;
                        if let Some(q) = &timer {
                            q.write(frame.cmd, 2, all);
                        }
                        Ok(())
                    })();
                    if let Err(e) = recorded {
                        frames.abandon(&frame)?;
                        return Err(e);
                    }
                    frames.submit(&frame, None, None)?;
                    frames.wait(&frame)?;
                    if let (Some(q), true) = (&timer, f > 0) {
                        let ticks = q.read_ticks()?;
                        if let (Some(a), Some(b)) =
                            (q.elapsed_ns(&ticks, 0, 1), q.elapsed_ns(&ticks, 0, 2))
                        {
                            anim.push(a * 1e-6);
                            total.push(b * 1e-6);
                        }
                    }
                    Ok(())
                })();
                if let Err(e) = result {
                    failed = Some(e.to_string());
                    break;
                }
                if f > 0 && started.elapsed().as_secs_f64() > args.max_seconds {
                    break;
                }
            }
            let record = std::mem::size_of::<InstanceRecord>();
            let result = match failed {
                Some(e) => Err(e),
                None => Ok(Figures {
                    frames: host.len(),
                    anim_gpu_ms: (!anim.is_empty()).then(|| median(anim)),
                    total_gpu_ms: (!total.is_empty()).then(|| median(total)),
                    host_ms: median(host),
                    gpu_bytes: n * (std::mem::size_of::<AnimRecord>() + record),
                    cpu_bytes: n * (stride * 16 + record),
                }),
            };
            let row = Row {
                path: desc.name,
                instances: n,
                result,
            };
            println!("{}", line(&row));
            rows.push(row);
        }
        device.wait_idle().map_err(|e| e.to_string())?;
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let csv = args.out.join("gpu-anim.csv");
    std::fs::write(&csv, to_csv(device_name, model, &rows))
        .map_err(|e| format!("{}: {e}", csv.display()))?;
    println!("gpu-bench: wrote {}", csv.display());
    println!();
    println!("{}", markdown(&rows));
    Ok(())
}

fn ms(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.3}"))
}

fn mb(bytes: usize) -> String {
    format!("{:.2}", bytes as f64 / 1e6)
}

fn line(r: &Row) -> String {
    match &r.result {
        Ok(f) => format!(
            "[gpu-anim] {:16} {:6} instances: animation {} ms, animation + skinning + draw {} ms (GPU), records {:.3} ms (host); {} MB/frame written vs {} MB with CPU palettes",
            r.path,
            r.instances,
            ms(f.anim_gpu_ms),
            ms(f.total_gpu_ms),
            f.host_ms,
            mb(f.gpu_bytes),
            mb(f.cpu_bytes)
        ),
        Err(e) => format!("[gpu-anim] {:16} {:6} instances: limit: {e}", r.path, r.instances),
    }
}

fn to_csv(device: &str, model: &Model, rows: &[Row]) -> String {
    let mut s = String::from(
        "device,path,instances,vertices,joints,frames,anim_gpu_ms,total_gpu_ms,host_ms,gpu_anim_bytes,cpu_anim_bytes,status\n",
    );
    for r in rows {
        let (v, j) = (model.meshes[0].vertex_count(), model.skeleton.len());
        let _ = match &r.result {
            Ok(f) => writeln!(
                s,
                "\"{device}\",{},{},{v},{j},{},{},{},{:.4},{},{},measured",
                r.path,
                r.instances,
                f.frames,
                ms(f.anim_gpu_ms),
                ms(f.total_gpu_ms),
                f.host_ms,
                f.gpu_bytes,
                f.cpu_bytes
            ),
            Err(e) => writeln!(
                s,
                "\"{device}\",{},{},{v},{j},0,,,,,,\"limit: {}\"",
                r.path,
                r.instances,
                e.replace('"', "'")
            ),
        };
    }
    s
}

fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| path | instances | GPU animation ms | animation + skinning + draw ms | host records ms | MB/frame (GPU anim) | MB/frame (CPU palettes) |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = match &r.result {
            Ok(f) => writeln!(
                s,
                "| {} | {} | {} | {} | {:.3} | {} | {} |",
                r.path,
                r.instances,
                ms(f.anim_gpu_ms),
                ms(f.total_gpu_ms),
                f.host_ms,
                mb(f.gpu_bytes),
                mb(f.cpu_bytes)
            ),
            Err(e) => writeln!(s, "| {} | {} | limit: {e} | | | | |", r.path, r.instances),
        };
    }
    s
}
