// The training loop through driver::train_plan on a small MLP plan: a run that fails after a
// periodic save leaves that checkpoint intact, and resuming from it ends bit for bit where an
// uninterrupted run ends (shuffled batches across epochs, Adam, warmup + cosine schedule); the
// batch sampler's state round-trips.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "dlc/error.h"
#include "dlc/npy.h"
#include "tests/unit/training_test_util.h"
#include "tools/driver/batch_sampler.h"
#include "tools/driver/checkpoint.h"
#include "tools/driver/trainer.h"

namespace dlc::driver {
namespace {

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("dlc_trainer_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    std::mt19937 rng(4);
    std::vector<int64_t> labels(22);
    for (int64_t& l : labels) l = int64_t(rng() % 3);
    write_npz(path("data.npz"),
              {{"x", test::random_normal({22, 5}, 9)}, {"label", Tensor::from_int64(labels, {22})}});
    passes::OptimizerOptions adam;
    adam.kind = "adam";
    plan_ = test::mlp_training_plan(4, adam);  // 22 rows: 5 batches an epoch, 2 rows dropped
    options_.data = path("data.npz");
    options_.shuffle = true;
    options_.seed = 11;
    options_.threads = 1;
    options_.steps = 12;
    options_.schedule = {.kind = "cosine", .lr = 0.05, .min_lr = 0.001, .warmup_steps = 3};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
  plan::Plan plan_;
  TrainOptions options_;
};

TEST_F(TrainerTest, ResumeAfterAFailedRunEndsWhereAStraightRunEnds) {
  TrainOptions straight = options_;
  straight.save = path("straight.npz");
  train_plan(plan_, "mlp", straight);

  // Saves every 4 steps, then fails during step 7: the file holds step 4, written whole.
  TrainOptions failing = options_;
  failing.save = path("periodic.npz");
  failing.save_every = 4;
  failing.on_step = [](int64_t step, int64_t, double, double) {
    if (step == 7) throw Error("interrupted");
  };
  EXPECT_THROW(train_plan(plan_, "mlp", failing), Error);
  EXPECT_EQ(read_checkpoint(path("periodic.npz")).step, 4);

  TrainOptions resumed = options_;
  resumed.resume = path("periodic.npz");
  resumed.save = path("resumed.npz");
  TrainReport r = train_plan(plan_, "mlp", resumed);
  EXPECT_EQ(r.first_step, 4);
  EXPECT_EQ(r.steps, 8);
  const std::map<std::string, Tensor> a = read_npz(path("straight.npz")), b = read_npz(path("resumed.npz"));
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_EQ(t.type, b.at(name).type) << name;
    EXPECT_EQ(t.bytes, b.at(name).bytes) << name;
  }
}

TEST_F(TrainerTest, ResumingWithAnotherPlanIsAnError) {
  TrainOptions first = options_;
  first.steps = 2;
  first.save = path("adam.npz");
  train_plan(plan_, "mlp", first);
  TrainOptions resumed = options_;
  resumed.resume = path("adam.npz");
  try {
    train_plan(test::mlp_training_plan(4, passes::OptimizerOptions{}), "sgd-mlp", resumed);
    FAIL() << "resumed an Adam checkpoint into an SGD plan";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another plan"), std::string::npos) << e.what();
  }
}

TEST(BatchSampler, RestoredStateDrawsTheSameBatches) {
  BatchSampler a(10, 3, /*shuffle=*/true, 5);  // 3 batches an epoch
  for (int64_t i = 0; i < 4; ++i) a.draw(i);
  BatchSampler b(10, 3, true, 99);
  b.restore(a.state());
  for (int64_t i = 4; i < 12; ++i) EXPECT_EQ(a.draw(i), b.draw(i)) << "batch " << i;
}

TEST(BatchSampler, EpochsArePermutationsAndDropThePartialBatch) {
  BatchSampler s(7, 2, true, 1);
  EXPECT_EQ(s.batches_per_epoch(), 3);
  std::vector<int64_t> seen;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t r : s.draw(i)) seen.push_back(r);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "a row twice in one epoch";
}

TEST(BatchSampler, ABadStateIsAnError) {
  BatchSampler s(4, 2, false, 0);
  BatchSampler::State st = s.state();
  st.order = {0, 1, 1, 3};
  EXPECT_THROW(s.restore(st), Error);
  st = s.state();
  st.rng = "not an rng";
  EXPECT_THROW(s.restore(st), Error);
}

}  // namespace
}  // namespace dlc::driver
