//! The Vulkan layer under the validation layer: the harness itself (it
//! sees misuse, leaks and nothing else), buffers, shaders, queries.
#![cfg(feature = "gpu")]

use std::sync::Arc;

use vkskin::gpu::{
    list_devices, one_shot, pipeline_barrier, select_device, vk, Buffer, BufferBarrier, BufferDesc,
    Device, DeviceDesc, GpuError, Instance, InstanceDesc, MessageLog, Severity, ShaderDesc,
    ShaderSources, TimestampQueries,
};
use vkskin_tests::gpu::{assert_no_problems, GpuTest};

#[test]
fn validation_layer_and_sync_validation_are_on_and_quiet() {
    let gpu = GpuTest::new();
    assert!(gpu.device.instance().validation_enabled());
    // A real workload: staging upload to device-local memory and back.
    let data: Vec<u32> = (0..1024).map(|i| i * 7 + 3).collect();
    let src = Buffer::device_local_with_data(
        &gpu.device,
        "round trip",
        vk::BufferUsageFlags::TRANSFER_SRC,
        bytemuck::cast_slice(&data),
    )
    .unwrap();
    let dst = Buffer::new(
        &gpu.device,
        &BufferDesc::readback(
            "round trip back",
            src.size(),
            vk::BufferUsageFlags::TRANSFER_DST,
        ),
    )
    .unwrap();
    one_shot(&gpu.device, |cmd| {
        unsafe {
            gpu.device.raw().cmd_copy_buffer(
                cmd,
                src.raw(),
                dst.raw(),
                &[vk::BufferCopy::default().size(src.size())],
            )
        };
        pipeline_barrier(
            &gpu.device,
            cmd,
            &[],
            &[BufferBarrier {
                buffer: dst.raw(),
                src_stage: vk::PipelineStageFlags2::COPY,
                src_access: vk::AccessFlags2::TRANSFER_WRITE,
                dst_stage: vk::PipelineStageFlags2::HOST,
                dst_access: vk::AccessFlags2::HOST_READ,
            }],
        );
        Ok(())
    })
    .unwrap();
    assert_eq!(dst.read::<u32>(0, data.len()).unwrap(), data);
    drop((src, dst));
    gpu.finish();
}

#[test]
fn the_harness_catches_a_missing_barrier() {
    // Two transfer writes to one buffer with no barrier between them: a
    // write-after-write hazard only synchronization validation reports.
    let gpu = GpuTest::new();
    let buf = Buffer::new(
        &gpu.device,
        &BufferDesc::device_local("hazard", 256, vk::BufferUsageFlags::TRANSFER_DST),
    )
    .unwrap();
    assert!(gpu.log.problems().is_empty());
    one_shot(&gpu.device, |cmd| {
        unsafe {
            gpu.device.raw().cmd_fill_buffer(cmd, buf.raw(), 0, 256, 1);
            gpu.device.raw().cmd_fill_buffer(cmd, buf.raw(), 0, 256, 2);
        }
        Ok(())
    })
    .unwrap();
    let hazards = gpu.log.matching("SYNC-HAZARD-WRITE-AFTER-WRITE");
    assert!(
        !hazards.is_empty(),
        "sync validation missed the hazard; log:\n{}",
        MessageLog::format(&gpu.log.all())
    );
    assert!(hazards.iter().all(|m| m.severity == Severity::Error));
    // And the harness's own check would have failed the test.
    let caught = std::panic::catch_unwind(|| assert_no_problems(&gpu.log));
    assert!(caught.is_err());
}

#[test]
fn the_harness_catches_plain_api_misuse() {
    // An invalid usage (not a hazard): a zero-sized fill is a VUID error.
    let gpu = GpuTest::new();
    let buf = Buffer::new(
        &gpu.device,
        &BufferDesc::device_local("misuse", 256, vk::BufferUsageFlags::TRANSFER_DST),
    )
    .unwrap();
    one_shot(&gpu.device, |cmd| {
        unsafe { gpu.device.raw().cmd_fill_buffer(cmd, buf.raw(), 0, 0, 1) };
        Ok(())
    })
    .unwrap();
    assert!(
        !gpu.log.matching("VUID-vkCmdFillBuffer-size").is_empty(),
        "{}",
        MessageLog::format(&gpu.log.all())
    );
}

/// Everything destroyed in order: nothing reported from device (or
/// instance) destruction on. The log outlives both.
#[test]
fn teardown_leaves_the_leak_report_empty() {
    let gpu = GpuTest::new();
    {
        let _b = Buffer::new(
            &gpu.device,
            &BufferDesc::host("leak check", 64, vk::BufferUsageFlags::UNIFORM_BUFFER),
        )
        .unwrap();
        let _q = TimestampQueries::new(&gpu.device, 2).unwrap();
    }
    let GpuTest { device, log } = gpu;
    gpu_clean_until_now(&log);
    let instance = device.instance().clone();
    assert_eq!(
        Arc::strong_count(&device),
        1,
        "something still holds the device"
    );
    let mark = log.len();
    drop(device);
    assert!(
        log.since(mark).is_empty(),
        "messages at device destruction:\n{}",
        MessageLog::format(&log.since(mark))
    );
    let mark = log.len();
    drop(instance);
    assert!(
        log.since(mark).iter().all(|m| !m.severity.is_problem()),
        "{}",
        MessageLog::format(&log.since(mark))
    );
}

fn gpu_clean_until_now(log: &MessageLog) {
    assert_no_problems(log);
}

/// The same check sees a leak: proof that the empty report above means
/// something.
#[test]
fn a_leaked_object_shows_in_the_leak_report() {
    let GpuTest { device, log } = GpuTest::new();
    let info = vk::BufferCreateInfo::default()
        .size(64)
        .usage(vk::BufferUsageFlags::TRANSFER_DST);
    // Deliberately never destroyed.
    let _leak = unsafe { device.raw().create_buffer(&info, None) }.unwrap();
    let mark = log.len();
    drop(device);
    let report = log.since(mark);
    assert!(
        report
            .iter()
            .any(|m| m.severity == Severity::Error && m.text.contains("VkBuffer")),
        "no leak reported; messages:\n{}",
        MessageLog::format(&report)
    );
}

#[test]
fn shader_compile_errors_name_file_and_line() {
    let sources = ShaderSources::embedded()
        .with(
            "broken/bad.vert",
            "#version 460\nvoid main() {\n    gl_Position = vec4(no_such_thing);\n}\n",
        )
        .with(
            "broken/uses_inc.vert",
            "#version 460\n#include \"inc.glsl\"\nvoid main() { gl_Position = f(); }\n",
        )
        .with(
            "broken/inc.glsl",
            "vec4 f() {\n    return vec4(1.0) +;\n}\n",
        );
    match vkskin::gpu::compile(&sources, &ShaderDesc::new("broken/bad.vert")) {
        Err(GpuError::ShaderCompile {
            file,
            line,
            message,
        }) => {
            assert_eq!(file, "broken/bad.vert");
            assert_eq!(line, 3);
            assert!(message.contains("no_such_thing"), "{message}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    match vkskin::gpu::compile(&sources, &ShaderDesc::new("broken/uses_inc.vert")) {
        Err(e @ GpuError::ShaderCompile { .. }) => {
            let GpuError::ShaderCompile { file, line, .. } = &e else {
                unreachable!()
            };
            assert_eq!((file.as_str(), *line), ("broken/inc.glsl", 2), "{e}");
            assert!(e.to_string().starts_with("broken/inc.glsl:2:"), "{e}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    // A missing include and a missing define are errors too, not panics.
    let missing = ShaderSources::embedded().with(
        "m.vert",
        "#version 460\n#include \"nope.glsl\"\nvoid main(){}\n",
    );
    assert!(matches!(
        vkskin::gpu::compile(&missing, &ShaderDesc::new("m.vert")),
        Err(GpuError::ShaderCompile { line: 2, .. })
    ));
    // The ubo storage without PALETTE_VEC4S stops at its #error.
    let no_define = ShaderSources::embedded().with(
        "d.vert",
        "#version 460\n#include \"skin/storage/ubo.glsl\"\nvoid main(){}\n",
    );
    assert!(matches!(
        vkskin::gpu::compile(&no_define, &ShaderDesc::new("d.vert")),
        Err(GpuError::ShaderCompile { .. })
    ));
}

#[test]
fn embedded_shaders_compile_in_every_permutation() {
    let sources = ShaderSources::embedded();
    // Every path's permutations compile where SkinPath builds them
    // (skin::layout_tests covers each storage x encoding x stage file).
    assert!(sources.get("skin/vertex.glsl").is_some());
    for capture in [false, true] {
        let mut d = ShaderDesc::new("skin/plain.vert");
        if capture {
            d = d.define("SKIN_CAPTURE", 1);
        }
        vkskin::gpu::compile(&sources, &d).unwrap_or_else(|e| panic!("{e}"));
    }
    for f in [
        "skin/skinned.frag",
        "debug/marker.vert",
        "debug/marker.frag",
    ] {
        vkskin::gpu::compile(&sources, &ShaderDesc::new(f)).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn device_listing_and_selection() {
    let instance = Instance::new(&InstanceDesc {
        validation: true,
        ..Default::default()
    })
    .unwrap();
    let devices = list_devices(&instance).unwrap();
    assert!(!devices.is_empty());
    let first = &devices[0];
    let by_index = select_device(&instance, Some("0")).unwrap();
    assert_eq!(by_index.index, 0);
    let word = first.name.split_whitespace().next().unwrap().to_uppercase();
    assert_eq!(
        select_device(&instance, Some(&word)).unwrap().index,
        first.index
    );
    match select_device(&instance, Some("no-such-gpu-anywhere")) {
        Err(GpuError::DeviceNotFound { available, .. }) => assert!(available.contains(&first.name)),
        other => panic!("{other:?}"),
    }
    let device = Device::new(
        &instance,
        &DeviceDesc {
            selector: Some("0"),
            surface: None,
        },
    )
    .unwrap();
    assert_eq!(device.physical().index, 0);
    drop(device);
    assert_no_problems(instance.messages());
}

#[test]
fn timestamps_measure_submitted_work() {
    let gpu = GpuTest::new();
    if !gpu.device.features().timestamps {
        eprintln!("NOTICE: the device has no timestamps; skipping");
        return;
    }
    let q = TimestampQueries::new(&gpu.device, 2).unwrap();
    let buf = Buffer::new(
        &gpu.device,
        &BufferDesc::device_local("timed", 1 << 20, vk::BufferUsageFlags::TRANSFER_DST),
    )
    .unwrap();
    one_shot(&gpu.device, |cmd| {
        q.reset(cmd);
        q.write(cmd, 0, vk::PipelineStageFlags2::ALL_COMMANDS);
        unsafe {
            gpu.device
                .raw()
                .cmd_fill_buffer(cmd, buf.raw(), 0, vk::WHOLE_SIZE, 7)
        };
        q.write(cmd, 1, vk::PipelineStageFlags2::ALL_COMMANDS);
        Ok(())
    })
    .unwrap();
    let ticks = q.read_ticks().unwrap();
    let ns = q.elapsed_ns(&ticks, 0, 1).unwrap();
    assert!(ticks[1] >= ticks[0] && ns >= 0.0, "{ticks:?}");
    drop((q, buf));
    gpu.finish();
}

#[test]
fn host_buffers_reject_out_of_range_writes() {
    let gpu = GpuTest::new();
    let mut b = Buffer::new(
        &gpu.device,
        &BufferDesc::host("small", 16, vk::BufferUsageFlags::UNIFORM_BUFFER),
    )
    .unwrap();
    assert!(b.write_bytes(8, &[0u8; 8]).is_ok());
    assert!(matches!(
        b.write_bytes(9, &[0u8; 8]),
        Err(GpuError::InvalidArgument(_))
    ));
    assert!(matches!(
        b.write_bytes(u64::MAX, &[0u8; 8]),
        Err(GpuError::InvalidArgument(_))
    ));
    drop(b);
    gpu.finish();
}

#[test]
fn compute_pipeline_writes_a_storage_buffer() {
    use vkskin::gpu::{
        write_buffer, BindingDesc, DescriptorPool, DescriptorSetLayout, Pipeline, PipelineLayout,
        ShaderModule,
    };
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let sources = ShaderSources::embedded().with(
        "test/fill.comp",
        "#version 460\n\
         layout(local_size_x = 64) in;\n\
         layout(set = 0, binding = 0, std430) writeonly buffer Out { uint values[]; } outb;\n\
         void main() { uint i = gl_GlobalInvocationID.x; outb.values[i] = i * SCALE + 1u; }\n",
    );
    let shader = ShaderModule::compile(
        d,
        &sources,
        &ShaderDesc::new("test/fill.comp").define("SCALE", "3u"),
    )
    .unwrap();
    let set_layout = DescriptorSetLayout::new(
        d,
        &[BindingDesc::new(
            0,
            vk::DescriptorType::STORAGE_BUFFER,
            vk::ShaderStageFlags::COMPUTE,
        )],
    )
    .unwrap();
    let pool = DescriptorPool::new(d, &[&set_layout], 1).unwrap();
    let set = pool.allocate(&set_layout, 1).unwrap()[0];
    let n = 256usize;
    let out = Buffer::new(
        d,
        &BufferDesc::readback(
            "compute out",
            (n * 4) as u64,
            vk::BufferUsageFlags::STORAGE_BUFFER,
        ),
    )
    .unwrap();
    write_buffer(d, set, 0, vk::DescriptorType::STORAGE_BUFFER, &out);
    let layout = PipelineLayout::new(d, &[set_layout.raw()], &[]).unwrap();
    let pipeline = Pipeline::compute(d, &layout, &shader).unwrap();
    one_shot(d, |cmd| {
        pipeline.bind(cmd);
        unsafe {
            d.raw().cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                layout.raw(),
                0,
                &[set],
                &[],
            );
            d.raw().cmd_dispatch(cmd, (n / 64) as u32, 1, 1);
        }
        pipeline_barrier(
            d,
            cmd,
            &[],
            &[BufferBarrier {
                buffer: out.raw(),
                src_stage: vk::PipelineStageFlags2::COMPUTE_SHADER,
                src_access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
                dst_stage: vk::PipelineStageFlags2::HOST,
                dst_access: vk::AccessFlags2::HOST_READ,
            }],
        );
        Ok(())
    })
    .unwrap();
    let got: Vec<u32> = out.read(0, n).unwrap();
    let want: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
    assert_eq!(got, want);
    drop((pipeline, layout, out, pool, set_layout, shader));
    gpu.finish();
}
