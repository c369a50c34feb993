// JsonArrayStream: the document it writes piecewise equals dump_json of the whole document, and a
// failure keeps stdout one JSON document.
#include "cli/json_stream.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/exit_codes.hpp"
#include "ipc/protocol.hpp"

namespace wsindex::cli {
namespace {

// A Context whose stdout and stderr are strings.
class Captured {
  public:
    Captured() {
        ctx.json = true;
        ctx.out = ::open_memstream(&out_, &out_size_);
        ctx.err = ::open_memstream(&err_, &err_size_);
    }
    ~Captured() {
        std::fclose(ctx.out);
        std::fclose(ctx.err);
        std::free(out_);
        std::free(err_);
    }
    Captured(const Captured&) = delete;
    Captured& operator=(const Captured&) = delete;
    std::string out() {
        std::fflush(ctx.out);
        return {out_, out_size_};
    }
    std::string err() {
        std::fflush(ctx.err);
        return {err_, err_size_};
    }
    Context ctx;

  private:
    char* out_ = nullptr;
    std::size_t out_size_ = 0;
    char* err_ = nullptr;
    std::size_t err_size_ = 0;
};

TEST(JsonArrayStream, PiecesMakeTheDumpOfTheWholeDocument) {
    const nlohmann::json items = {
        nlohmann::json{{"path", "a\nb"}, {"size", 1}},
        nlohmann::json{{"path", nlohmann::json{{"b64", "/w=="}}}, {"size", 2}},
        nlohmann::json{{"path", "caf\xc3\xa9 \x7f\x01"}, {"size", 3}},
    };
    Captured c;
    JsonArrayStream stream(c.ctx, "entries");
    stream.element(*ipc::dump_json(items[0]));
    stream.elements(*ipc::dump_json(items[1]) + "," + *ipc::dump_json(items[2]), 2);
    stream.elements("", 0);
    EXPECT_EQ(stream.count(), 3u);
    stream.close(R"("truncated":false)");
    EXPECT_EQ(c.out(),
              *ipc::dump_json(nlohmann::json{{"entries", items}, {"truncated", false}}) + "\n");
}

TEST(JsonArrayStream, EmptyDocument) {
    Captured c;
    JsonArrayStream stream(c.ctx, "errors");
    stream.close(R"("scan_id":7)");
    EXPECT_EQ(c.out(),
              *ipc::dump_json(nlohmann::json{{"errors", nlohmann::json::array()}, {"scan_id", 7}}) +
                  "\n");
}

TEST(JsonArrayStream, FailureBeforeAnyElementIsTheErrorDocumentAlone) {
    Captured c;
    JsonArrayStream stream(c.ctx, "entries");
    const auto error = ipc::make_error(ipc::ErrorKind::Disconnected, "wsindexd closed it");
    const int code = stream.fail(error);
    EXPECT_EQ(code, kExitFailure);
    const auto doc = nlohmann::json::parse(c.out());
    EXPECT_FALSE(doc.contains("entries"));
    EXPECT_EQ(doc["message"], "wsindexd closed it");
    EXPECT_EQ(doc["exit_code"], kExitFailure);
    EXPECT_NE(c.err().find("wsindexd closed it"), std::string::npos);
}

TEST(JsonArrayStream, FailureAfterElementsEndsTheSameDocument) {
    Captured c;
    JsonArrayStream stream(c.ctx, "entries");
    stream.element(R"({"path":"/a"})");
    const auto error = ipc::make_error(ipc::ErrorKind::Disconnected, "lost \xff");
    const int code = stream.fail(error);
    EXPECT_EQ(code, kExitFailure);
    const std::string out = c.out();
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.back(), '\n');
    EXPECT_EQ(out.find('\n'), out.size() - 1) << out;  // one document, one line
    const auto doc = nlohmann::json::parse(out);       // throws (fails the test) if not JSON
    EXPECT_EQ(doc["entries"], nlohmann::json::array({nlohmann::json{{"path", "/a"}}}));
    EXPECT_EQ(doc["error"], std::string(ipc::error_name(ipc::ErrorKind::Disconnected)));
    EXPECT_EQ(doc["exit_code"], kExitFailure);
    EXPECT_TRUE(doc["message"].is_string());
    EXPECT_NE(c.err().find("lost"), std::string::npos);
}

}  // namespace
}  // namespace wsindex::cli
