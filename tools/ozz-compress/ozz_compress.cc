// ozz-compress: compresses vkskin's clips with ozz-animation's own offline
// pipeline (AnimationOptimizer at a given tolerance and distance, then
// AnimationBuilder), samples the runtime animations at the times vkskin asks
// for and times ozz's SamplingJob, for samples/clip-compare.
//
//   ozz-compress IN OUT TOLERANCE_M DISTANCE_M
//
// IN and OUT are the little-endian binary interchange files that
// samples/clip-compare/src/interchange.rs defines (and documents); both
// sides read what the other writes, so a change there is a change here.
//
// Timing follows vkskin's anim bench (engine/benches/anim.rs, per_element):
// 3 warm-up calls, calls counted in 5 ms, a run is a fifth of that, the
// fastest of 41 runs, in ns per joint. Cached: time advancing by the file's
// step, wrapping at the duration. Random seek: the file's shuffled times, in
// order, cycling.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ozz/animation/offline/animation_builder.h"
#include "ozz/animation/offline/animation_optimizer.h"
#include "ozz/animation/offline/raw_animation.h"
#include "ozz/animation/offline/raw_skeleton.h"
#include "ozz/animation/offline/skeleton_builder.h"
#include "ozz/animation/runtime/animation.h"
#include "ozz/animation/runtime/sampling_job.h"
#include "ozz/animation/runtime/skeleton.h"
#include "ozz/base/maths/simd_math.h"
#include "ozz/base/maths/soa_transform.h"
#include "ozz/base/span.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "ozz-compress: %s\n", what.c_str());
  std::exit(1);
}

// Reads the input file; every count is checked against the bytes left
// before anything is allocated.
struct Reader {
  std::vector<uint8_t> bytes;
  size_t at = 0;
  std::string file;

  void Need(size_t n, const char* what) {
    if (n > bytes.size() - at) {
      Fail(file + ": truncated at byte " + std::to_string(at) + " (" + what +
           ")");
    }
  }
  uint32_t U32(const char* what) {
    Need(4, what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(bytes[at + i]) << (8 * i);
    at += 4;
    return v;
  }
  int32_t I32(const char* what) { return int32_t(U32(what)); }
  float F32(const char* what) {
    const uint32_t u = U32(what);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  // A count of items of `item_bytes` each that must fit in what is left.
  uint32_t Count(size_t item_bytes, const char* what) {
    const uint32_t n = U32(what);
    if (item_bytes != 0 && n > (bytes.size() - at) / item_bytes) {
      Fail(file + ": " + what + " count " + std::to_string(n) +
           " exceeds the file");
    }
    return n;
  }
};

struct Writer {
  std::vector<uint8_t> bytes;
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(uint8_t(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes.push_back(uint8_t(v >> (8 * i)));
  }
  void F32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    U32(u);
  }
  void F64(double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    U64(u);
  }
};

struct Joint {
  int parent;
  float t[3], r[4], s[3];
};

struct Track {
  std::vector<float> times;
  std::vector<float> values;  // 3 or 4 floats per key.
};

struct InClip {
  std::string name;
  float duration;
  std::vector<Track> tracks;  // joints x (T, R, S).
  std::vector<float> evals;
  float step;
  std::vector<float> seeks;
};

using Clock = std::chrono::steady_clock;

template <typename F>
double PerElement(size_t elements, F&& f) {
  for (int i = 0; i < 3; ++i) f();
  const auto start = Clock::now();
  uint64_t calls = 0;
  while (Clock::now() - start < std::chrono::milliseconds(5)) {
    f();
    ++calls;
  }
  const uint64_t per_run = std::max<uint64_t>(calls / 5, 1);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < 41; ++r) {
    const auto t = Clock::now();
    for (uint64_t c = 0; c < per_run; ++c) f();
    const double ns =
        std::chrono::duration<double, std::nano>(Clock::now() - t).count();
    best = std::min(best, ns / (double(per_run) * double(elements)));
  }
  return best;
}

template <typename T>
inline void Keep(const T& v) {
  asm volatile("" : : "g"(&v) : "memory");
}

void AddJoint(ozz::animation::offline::RawSkeleton::Joint* out,
              const std::vector<Joint>& joints,
              const std::vector<std::vector<int>>& children, int i) {
  const Joint& j = joints[i];
  out->name = ("j" + std::to_string(i)).c_str();
  out->transform.translation = ozz::math::Float3(j.t[0], j.t[1], j.t[2]);
  out->transform.rotation =
      ozz::math::Quaternion(j.r[0], j.r[1], j.r[2], j.r[3]);
  out->transform.scale = ozz::math::Float3(j.s[0], j.s[1], j.s[2]);
  out->children.resize(children[i].size());
  for (size_t c = 0; c < children[i].size(); ++c) {
    AddJoint(&out->children[c], joints, children, children[i][c]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    Fail("usage: ozz-compress IN OUT TOLERANCE_M DISTANCE_M");
  }
  const float tolerance = std::strtof(argv[3], nullptr);
  const float distance = std::strtof(argv[4], nullptr);
  if (!(tolerance > 0.f) || !(distance > 0.f)) {
    Fail("tolerance and distance must be positive numbers of meters");
  }

  Reader in;
  in.file = argv[1];
  {
    FILE* f = std::fopen(argv[1], "rb");
    if (!f) Fail(std::string(argv[1]) + ": cannot open");
    uint8_t buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
      in.bytes.insert(in.bytes.end(), buf, buf + n);
    }
    std::fclose(f);
  }
  in.Need(8, "magic");
  if (std::memcmp(in.bytes.data(), "VKOZIN01", 8) != 0) {
    Fail(in.file + ": not a clip-compare input file (magic VKOZIN01)");
  }
  in.at = 8;

  // Skeleton: parents (before children) and bind-pose locals.
  const uint32_t num_joints = in.Count(44, "joint");
  if (num_joints == 0) Fail(in.file + ": no joints");
  std::vector<Joint> joints(num_joints);
  std::vector<std::vector<int>> children(num_joints);
  std::vector<int> roots;
  for (uint32_t i = 0; i < num_joints; ++i) {
    Joint& j = joints[i];
    j.parent = in.I32("parent");
    for (float& v : j.t) v = in.F32("bind translation");
    for (float& v : j.r) v = in.F32("bind rotation");
    for (float& v : j.s) v = in.F32("bind scale");
    if (j.parent < 0) {
      roots.push_back(int(i));
    } else if (uint32_t(j.parent) >= i) {
      Fail(in.file + ": joint " + std::to_string(i) +
           " has a parent that does not come before it");
    } else {
      children[j.parent].push_back(int(i));
    }
  }
  ozz::animation::offline::RawSkeleton raw_skeleton;
  raw_skeleton.roots.resize(roots.size());
  for (size_t r = 0; r < roots.size(); ++r) {
    AddJoint(&raw_skeleton.roots[r], joints, children, roots[r]);
  }
  ozz::unique_ptr<ozz::animation::Skeleton> skeleton =
      ozz::animation::offline::SkeletonBuilder()(raw_skeleton);
  if (!skeleton || skeleton->num_joints() != int(num_joints)) {
    Fail("ozz's SkeletonBuilder failed");
  }
  // ozz orders joints depth-first: ozz_index[vkskin joint].
  std::vector<int> ozz_index(num_joints, -1);
  const auto names = skeleton->joint_names();
  for (int k = 0; k < int(num_joints); ++k) {
    ozz_index[std::atoi(names[k] + 1)] = k;
  }

  const uint32_t num_clips = in.Count(12, "clip");
  Writer out;
  for (const char c : std::string("VKOZOUT1")) out.bytes.push_back(uint8_t(c));
  out.U32(num_clips);
  for (uint32_t c = 0; c < num_clips; ++c) {
    InClip clip;
    const uint32_t name_len = in.Count(1, "name byte");
    clip.name.assign(reinterpret_cast<const char*>(&in.bytes[in.at]),
                     name_len);
    in.at += name_len;
    clip.duration = in.F32("duration");
    if (!(clip.duration > 0.f) || !std::isfinite(clip.duration)) {
      Fail(in.file + ": clip '" + clip.name + "' has a duration that is not positive");
    }
    clip.tracks.resize(size_t(num_joints) * 3);
    for (uint32_t j = 0; j < num_joints; ++j) {
      for (int ch = 0; ch < 3; ++ch) {
        const size_t width = ch == 1 ? 4 : 3;
        Track& t = clip.tracks[size_t(j) * 3 + ch];
        const uint32_t keys = in.Count(4 * (1 + width), "key");
        t.times.resize(keys);
        for (float& v : t.times) v = in.F32("key time");
        t.values.resize(keys * width);
        for (float& v : t.values) v = in.F32("key value");
      }
    }
    const uint32_t evals = in.Count(4, "evaluation time");
    clip.evals.resize(evals);
    for (float& v : clip.evals) v = in.F32("evaluation time");
    clip.step = in.F32("cached step");
    const uint32_t seeks = in.Count(4, "seek time");
    if (seeks == 0) Fail(in.file + ": no seek times");
    clip.seeks.resize(seeks);
    for (float& v : clip.seeks) v = in.F32("seek time");

    // Raw animation in ozz's joint order.
    using ozz::animation::offline::RawAnimation;
    RawAnimation raw;
    raw.name = clip.name.c_str();
    raw.duration = clip.duration;
    raw.tracks.resize(num_joints);
    for (uint32_t j = 0; j < num_joints; ++j) {
      RawAnimation::JointTrack& track = raw.tracks[ozz_index[j]];
      const Track& tt = clip.tracks[size_t(j) * 3 + 0];
      for (size_t k = 0; k < tt.times.size(); ++k) {
        const float* v = &tt.values[k * 3];
        track.translations.push_back(
            {tt.times[k], ozz::math::Float3(v[0], v[1], v[2])});
      }
      const Track& tr = clip.tracks[size_t(j) * 3 + 1];
      for (size_t k = 0; k < tr.times.size(); ++k) {
        const float* v = &tr.values[k * 4];
        track.rotations.push_back(
            {tr.times[k], ozz::math::Quaternion(v[0], v[1], v[2], v[3])});
      }
      const Track& ts = clip.tracks[size_t(j) * 3 + 2];
      for (size_t k = 0; k < ts.times.size(); ++k) {
        const float* v = &ts.values[k * 3];
        track.scales.push_back(
            {ts.times[k], ozz::math::Float3(v[0], v[1], v[2])});
      }
    }
    if (!raw.Validate()) {
      Fail(in.file + ": clip '" + clip.name +
           "' is not a valid ozz raw animation (key times out of order or "
           "outside the duration)");
    }
    ozz::animation::offline::AnimationOptimizer optimizer;
    optimizer.setting.tolerance = tolerance;
    optimizer.setting.distance = distance;
    RawAnimation optimized;
    if (!optimizer(raw, *skeleton, &optimized)) {
      Fail("clip '" + clip.name + "': ozz's AnimationOptimizer failed");
    }
    uint32_t keys[3] = {0, 0, 0};
    for (const auto& t : optimized.tracks) {
      keys[0] += uint32_t(t.translations.size());
      keys[1] += uint32_t(t.rotations.size());
      keys[2] += uint32_t(t.scales.size());
    }
    ozz::unique_ptr<ozz::animation::Animation> anim =
        ozz::animation::offline::AnimationBuilder()(optimized);
    if (!anim) Fail("clip '" + clip.name + "': ozz's AnimationBuilder failed");

    ozz::animation::SamplingJob::Context context(anim->num_tracks());
    std::vector<ozz::math::SoaTransform> soa(anim->num_soa_tracks());
    const float inv_duration = 1.f / anim->duration();
    auto sample = [&](float time) {
      ozz::animation::SamplingJob job;
      job.animation = anim.get();
      job.context = &context;
      // As AnimationBuilder turns key times into ratios (time * 1 /
      // duration), so that a time on a key lands on it exactly.
      job.ratio = time * inv_duration;
      job.output = ozz::make_span(soa);
      if (!job.Run()) Fail("clip '" + clip.name + "': sampling job failed");
    };

    out.U64(uint64_t(anim->size()));
    out.U32(keys[0]);
    out.U32(keys[1]);
    out.U32(keys[2]);

    // Timing first (the context then starts where sampling left it).
    float t = 0.f;
    const double cached = PerElement(num_joints, [&] {
      t += clip.step;
      if (t > clip.duration) t -= clip.duration;
      sample(t);
      Keep(soa[0]);
    });
    size_t next = 0;
    const double seek = PerElement(num_joints, [&] {
      next = (next + 1) % clip.seeks.size();
      sample(clip.seeks[next]);
      Keep(soa[0]);
    });
    out.F64(cached);
    out.F64(seek);

    // Local transforms at each evaluation time, in vkskin's joint order.
    out.U32(num_joints);
    out.U32(evals);
    std::vector<float> aos(size_t(anim->num_soa_tracks()) * 4 * 10);
    for (const float time : clip.evals) {
      context.Invalidate();
      sample(std::min(std::max(time, 0.f), clip.duration));
      for (size_t s = 0; s < soa.size(); ++s) {
        const ozz::math::SoaTransform& x = soa[s];
        const ozz::math::SimdFloat4 lanes[10] = {
            x.translation.x, x.translation.y, x.translation.z,
            x.rotation.x,    x.rotation.y,    x.rotation.z,
            x.rotation.w,    x.scale.x,       x.scale.y,
            x.scale.z};
        for (int f = 0; f < 10; ++f) {
          float v[4];
          ozz::math::StorePtrU(lanes[f], v);
          for (int l = 0; l < 4; ++l) aos[(s * 4 + l) * 10 + f] = v[l];
        }
      }
      for (uint32_t j = 0; j < num_joints; ++j) {
        const float* v = &aos[size_t(ozz_index[j]) * 10];
        for (int f = 0; f < 10; ++f) out.F32(v[f]);
      }
    }
    std::fprintf(stderr, "%s: %zu bytes, keys T %u R %u S %u, %.2f / %.2f ns/joint\n",
                 clip.name.c_str(), anim->size(), keys[0], keys[1], keys[2],
                 cached, seek);
  }
  if (in.at != in.bytes.size()) {
    Fail(in.file + ": " + std::to_string(in.bytes.size() - in.at) +
         " bytes after the last clip");
  }
  FILE* f = std::fopen(argv[2], "wb");
  if (!f) Fail(std::string(argv[2]) + ": cannot create");
  if (std::fwrite(out.bytes.data(), 1, out.bytes.size(), f) != out.bytes.size()) {
    Fail(std::string(argv[2]) + ": write failed");
  }
  std::fclose(f);
  return 0;
}
