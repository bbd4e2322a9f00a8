// The pass manager: runs passes in order, honours --disable-pass, --print-ir-after(-all),
// --dump-ir and --stop-after (a name or a number), rejects unknown or required pass names, and
// names the pass whose output fails verification.
#include "passes/pass_manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "passes/dce.h"

namespace dlc::passes {
namespace {

// x -> Relu -> y (returned), plus a dead Neg.
std::unique_ptr<ir::Graph> graph_with_dead_node() {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = g->add_input("x", TensorType{DType::F32, {3}});
  ir::Node* relu = g->add_node(ir::OpKind::Relu, {x}, {}, {"y"}, "relu");
  g->add_node(ir::OpKind::Neg, {x}, {}, {"dead"}, "neg");
  g->set_outputs({relu->outputs[0]});
  return g;
}

// Gives a node's output a type inference disagrees with.
class BreakTypes final : public Pass {
 public:
  std::string_view name() const override { return "break-types"; }
  std::string_view summary() const override { return "test: corrupts a type"; }
  bool run(ir::Graph& g) override {
    g.outputs()[0]->type.shape = {99};
    return true;
  }
};

// Options with one field set by `set`.
template <typename Set>
PipelineOptions options_with(Set&& set) {
  PipelineOptions o;
  set(o);
  return o;
}

PassManager dce_pipeline(PipelineOptions options, std::ostream& out) {
  PassManager pm(std::move(options), out);
  pm.add(std::make_unique<DeadCodeElimination>());
  return pm;
}

TEST(PassManager, RunsAndRecords) {
  auto g = graph_with_dead_node();
  std::ostringstream out;
  PassManager pm = dce_pipeline({}, out);
  EXPECT_TRUE(pm.run(*g));
  ASSERT_EQ(pm.records().size(), 1u);
  EXPECT_TRUE(pm.records()[0].ran);
  EXPECT_TRUE(pm.records()[0].changed);
  EXPECT_EQ(g->num_nodes(), 1);
  EXPECT_TRUE(out.str().empty());
}

TEST(PassManager, DisabledPassDoesNotRun) {
  auto g = graph_with_dead_node();
  std::ostringstream out;
  PassManager pm = dce_pipeline(options_with([](auto& o) { o.disabled = {"dce"}; }), out);
  EXPECT_TRUE(pm.run(*g));
  EXPECT_FALSE(pm.records()[0].ran);
  EXPECT_EQ(g->num_nodes(), 2);
}

TEST(PassManager, PrintsAfterNamedPass) {
  auto g = graph_with_dead_node();
  std::ostringstream out;
  PassManager pm = dce_pipeline(options_with([](auto& o) { o.print_after = {"dce"}; }), out);
  pm.run(*g);
  EXPECT_NE(out.str().find("IR after pass 1 (dce)"), std::string::npos);
  EXPECT_NE(out.str().find("Relu(%x)"), std::string::npos);
  EXPECT_EQ(out.str().find("Neg("), std::string::npos) << out.str();
}

TEST(PassManager, StopAfterEndsEarly) {
  std::ostringstream out;
  for (const char* stop : {"1", "dce"}) {
    auto g = graph_with_dead_node();
    PassManager quiet(options_with([&](auto& o) {
                        o.stop_after = stop;
                        o.verify_each = false;
                      }),
                      out);
    quiet.add(std::make_unique<DeadCodeElimination>());
    quiet.add(std::make_unique<BreakTypes>());
    EXPECT_FALSE(quiet.run(*g)) << stop;
    EXPECT_TRUE(quiet.records()[0].ran) << stop;
    EXPECT_FALSE(quiet.records()[1].ran) << stop;
    EXPECT_EQ(g->outputs()[0]->type.shape, Shape{3}) << stop;
  }
}

TEST(PassManager, StopAfterTheLastPassStillStops) {
  auto g = graph_with_dead_node();
  std::ostringstream out;
  PassManager pm = dce_pipeline(options_with([](auto& o) { o.stop_after = "dce"; }), out);
  EXPECT_FALSE(pm.run(*g));
  EXPECT_TRUE(pm.records()[0].ran);
}

TEST(PassManager, StopAfterAnUnknownPassIsAnError) {
  std::ostringstream out;
  for (const char* stop : {"fusion", "0", "2", "-1"}) {
    auto g = graph_with_dead_node();
    PassManager pm = dce_pipeline(options_with([&](auto& o) { o.stop_after = stop; }), out);
    EXPECT_THROW(pm.check_options(), Error) << stop;
    EXPECT_THROW(pm.run(*g), Error) << stop;
    EXPECT_EQ(g->num_nodes(), 2) << stop;
  }
}

TEST(PassManager, VerificationFailureNamesThePass) {
  auto g = graph_with_dead_node();
  std::ostringstream out;
  PassManager pm(options_with([](auto& o) { o.verify_each = true; }), out);
  pm.add(std::make_unique<BreakTypes>());
  try {
    pm.run(*g);
    FAIL() << "verification did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("after pass 'break-types'"), std::string::npos) << e.what();
  }
}

TEST(PassManager, UnknownAndRequiredPassNamesAreErrors) {
  auto g = graph_with_dead_node();
  std::ostringstream out;
  PassManager unknown = dce_pipeline(options_with([](auto& o) { o.disabled = {"fusion"}; }), out);
  EXPECT_THROW(unknown.run(*g), Error);
  PassManager required(options_with([](auto& o) { o.disabled = {"dce"}; }), out);
  required.add(std::make_unique<DeadCodeElimination>(), /*required=*/true);
  EXPECT_THROW(required.run(*g), Error);
  EXPECT_EQ(g->num_nodes(), 2);
}

TEST(PassManager, DumpsOneFilePerPass) {
  auto g = graph_with_dead_node();
  const auto dir = std::filesystem::temp_directory_path() / "dlc_pass_manager_test";
  std::filesystem::remove_all(dir);
  std::ostringstream out;
  PassManager pm = dce_pipeline(options_with([&](auto& o) { o.dump_dir = dir.string(); }), out);
  pm.run(*g);
  const std::string text = read_file((dir / "01-dce.dlir").string());
  EXPECT_NE(text.find("graph"), std::string::npos);
  EXPECT_EQ(text.find("Neg("), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dlc::passes
