// The IR parser: a hand-written lexer and recursive-descent parser for the textual form.
#include "ir/parser.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "ir/infer.h"
#include "ir/verifier.h"

namespace dlc::ir {

namespace {

enum class Tok { Ident, ValueName, GraphName, Number, String, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // identifier, name, number spelling, unescaped string, or the punctuation
  int line = 0, col = 0;
};

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file, int first_line)
      : text_(text), file_(file), line_(first_line) {}

  [[noreturn]] void fail_at(int line, int col, const std::string& msg) const {
    throw Error(fmt::format("{}:{}:{}: {}", file_, line, col, msg));
  }

  Token next() {
    skip_space();
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= text_.size()) return t;
    char c = text_[pos_];
    if (c == '%' || c == '@') {
      advance();
      t.kind = c == '%' ? Tok::ValueName : Tok::GraphName;
      bool quoted = peek() == '"';
      t.text = quoted ? string_literal() : name_chars();
      if (t.text.empty() && !quoted) fail_at(t.line, t.col, fmt::format("expected a name after '{}'", c));
    } else if (c == '"') {
      t.kind = Tok::String;
      t.text = string_literal();
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Tok::Ident;
      t.text = name_chars();
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
      t.kind = Tok::Number;
      t.text = number();
    } else if (std::string_view("{}()[]<>,:=").find(c) != std::string_view::npos) {
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
      advance();
    } else {
      fail_at(t.line, t.col, fmt::format("unexpected character '{}'", c));
    }
    return t;
  }

 private:
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    if (text_[pos_++] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
  }
  void skip_space() {
    while (pos_ < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else if (peek() == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && peek() != '\n') advance();
      } else {
        break;
      }
    }
  }
  std::string name_chars() {
    std::string s;
    while (pos_ < text_.size() && is_name_char(peek())) {
      s += peek();
      advance();
    }
    return s;
  }
  std::string number() {
    std::string s;
    if (peek() == '-' || peek() == '+') {
      s += peek();
      advance();
    }
    if (std::isalpha(static_cast<unsigned char>(peek()))) return s + name_chars();  // -inf
    while (pos_ < text_.size()) {
      char c = peek();
      bool exp_sign = (c == '-' || c == '+') && !s.empty() && (s.back() == 'e' || s.back() == 'E');
      if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || exp_sign))
        break;
      s += c;
      advance();
    }
    return s;
  }
  std::string string_literal() {
    int line = line_, col = col_;
    advance();  // opening quote
    std::string s;
    while (true) {
      if (pos_ >= text_.size() || peek() == '\n') fail_at(line, col, "unterminated string");
      char c = peek();
      advance();
      if (c == '"') return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      char e = peek();
      advance();
      switch (e) {
        case '"':
          s += '"';
          break;
        case '\\':
          s += '\\';
          break;
        case 'n':
          s += '\n';
          break;
        case 't':
          s += '\t';
          break;
        case 'x': {
          std::string hex{peek(), peek(1)};
          unsigned v = 0;
          auto [p, ec] = std::from_chars(hex.data(), hex.data() + 2, v, 16);
          if (ec != std::errc() || p != hex.data() + 2)
            fail_at(line_, col_, "bad \\x escape: expected two hex digits");
          advance();
          advance();
          s += char(v);
          break;
        }
        default:
          fail_at(line_, col_ - 1, fmt::format("unknown escape '\\{}'", e));
      }
    }
  }

  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_, col_ = 1;
};

bool is_float_spelling(const std::string& s) {
  return s.find_first_of(".eE") != std::string::npos || s.find("inf") != std::string::npos ||
         s.find("nan") != std::string::npos;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, int first_line) : lex_(text, file, first_line) {
    tok_ = lex_.next();
  }

  std::unique_ptr<Graph> parse() {
    g_ = std::make_unique<Graph>();
    expect_ident("graph");
    if (tok_.kind != Tok::GraphName) fail("expected the graph name (@NAME)");
    g_->name = take().text;
    expect_punct("{");
    while (!(tok_.kind == Tok::Ident && tok_.text == "return")) {
      if (tok_.kind == Tok::End) fail("expected 'return' before the end of the input");
      if (tok_.kind == Tok::Ident && parse_role(tok_.text)) {
        declaration();
      } else {
        node();
      }
    }
    Token ret = take();
    std::vector<Value*> outs;
    if (!(tok_.kind == Tok::Punct && tok_.text == "}")) {
      do {
        Token at = tok_;
        Value* v = operand();
        if (!v) fail_at(at, "a graph output cannot be absent");
        outs.push_back(v);
      } while (accept_punct(","));
    }
    g_->set_outputs(std::move(outs));
    expect_punct("}");
    if (tok_.kind != Tok::End) fail("expected the end of the input after the graph");
    try {
      verify(*g_);
    } catch (const Error& e) {
      fail_at(ret, e.what());
    }
    return std::move(g_);
  }

 private:
  // ---- tokens
  [[noreturn]] void fail_at(const Token& t, const std::string& msg) const {
    lex_.fail_at(t.line, t.col, msg);
  }
  [[noreturn]] void fail(const std::string& msg) const {
    fail_at(tok_,
            tok_.kind == Tok::End ? msg + " (got the end of the input)" : msg + ", got '" + tok_.text + "'");
  }
  Token take() {
    Token t = std::move(tok_);
    tok_ = lex_.next();
    return t;
  }
  bool accept_punct(const char* p) {
    if (tok_.kind != Tok::Punct || tok_.text != p) return false;
    take();
    return true;
  }
  void expect_punct(const char* p) {
    if (!accept_punct(p)) fail(fmt::format("expected '{}'", p));
  }
  void expect_ident(const char* word) {
    if (tok_.kind != Tok::Ident || tok_.text != word) fail(fmt::format("expected '{}'", word));
    take();
  }
  bool at_absent() const { return tok_.kind == Tok::Ident && tok_.text == "_"; }

  // ---- scalars
  int64_t to_integer(const Token& t) const {
    if (t.kind != Tok::Number || is_float_spelling(t.text))
      fail_at(t, "expected an integer, got '" + t.text + "'");
    const std::string& s = t.text;
    const char* b = s.data() + (s[0] == '+' ? 1 : 0);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(b, s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) fail_at(t, "bad integer '" + s + "'");
    return v;
  }
  double to_float(const Token& t) const {
    bool word = t.kind == Tok::Ident && (t.text == "nan" || t.text == "inf");
    if (t.kind != Tok::Number && !word) fail_at(t, "expected a number, got '" + t.text + "'");
    const std::string& s = t.text;
    const char* b = s.data() + (s[0] == '+' ? 1 : 0);
    double v = 0;
    auto [p, ec] = std::from_chars(b, s.data() + s.size(), v);
    if (p != s.data() + s.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
      fail_at(t, "bad number '" + s + "'");
    // Out-of-range spellings (denormals, overflow) read as the nearest value, like strtod.
    if (ec == std::errc::result_out_of_range) v = std::strtod(std::string(b).c_str(), nullptr);
    return v;
  }
  int64_t integer() { return to_integer(take()); }
  double floating() { return to_float(take()); }
  std::string string() {
    if (tok_.kind != Tok::String) fail("expected a string");
    return take().text;
  }
  std::string name_or_string() {
    if (tok_.kind != Tok::Ident && tok_.kind != Tok::String) fail("expected a name");
    return take().text;
  }

  // ---- types and tensors
  TensorType tensor_type() {
    if (tok_.kind != Tok::Ident) fail("expected a type such as f32[2,3]");
    auto dt = parse_dtype(tok_.text);
    if (!dt) fail("unknown element type");
    take();
    TensorType t{*dt, {}};
    expect_punct("[");
    if (!accept_punct("]")) {
      do {
        Token at = tok_;
        int64_t d = integer();
        if (d < 0) fail_at(at, "dimensions must be non-negative");
        t.shape.push_back(d);
      } while (accept_punct(","));
      expect_punct("]");
    }
    return t;
  }
  Tensor tensor_data(const TensorType& type) {
    if (tok_.kind == Tok::Punct && tok_.text == "<") fail("elided tensor data cannot be parsed");
    Token open = tok_;
    expect_punct("[");
    std::vector<double> fvals;
    std::vector<int64_t> ivals;
    bool floating_type = is_floating(type.dtype);
    if (!accept_punct("]")) {
      do {
        if (floating_type) {
          fvals.push_back(floating());
        } else {
          Token at = tok_;
          ivals.push_back(integer());
          check_int_range(at, type.dtype, ivals.back());
        }
      } while (accept_punct(","));
      expect_punct("]");
    }
    size_t n = floating_type ? fvals.size() : ivals.size();
    if (int64_t(n) != type.numel())
      fail_at(open, fmt::format("{} holds {} elements but {} are given", type.str(), type.numel(), n));
    if (floating_type) return Tensor::from_double(type.dtype, fvals, type.shape);
    if (type.dtype == DType::I64) return Tensor::from_int64(ivals, type.shape);
    return Tensor::from_double(type.dtype, std::vector<double>(ivals.begin(), ivals.end()), type.shape);
  }
  void check_int_range(const Token& at, DType dt, int64_t v) const {
    auto in = [&](auto lo, auto hi) { return v >= int64_t(lo) && v <= int64_t(hi); };
    bool ok = true;
    switch (dt) {
      case DType::I32:
        ok = in(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
        break;
      case DType::I8:
        ok = in(-128, 127);
        break;
      case DType::U8:
        ok = in(0, 255);
        break;
      case DType::Bool:
        ok = in(0, 1);
        break;
      default:
        break;
    }
    if (!ok) fail_at(at, fmt::format("{} is out of range for {}", v, dtype_name(dt)));
  }

  // ---- attributes
  AttrValue attr_value() {
    if (tok_.kind == Tok::String) return take().text;
    if (tok_.kind == Tok::Ident && tok_.text == "tensor") {
      take();
      expect_punct("<");
      TensorType t = tensor_type();
      expect_punct(">");
      return tensor_data(t);
    }
    if (tok_.kind == Tok::Punct && tok_.text == "[") return attr_list();
    if (tok_.kind == Tok::Number && !is_float_spelling(tok_.text)) return integer();
    return floating();
  }
  AttrValue attr_list() {
    expect_punct("[");
    if (accept_punct("]")) return std::vector<int64_t>{};
    if (tok_.kind == Tok::String) {
      std::vector<std::string> v;
      do v.push_back(string());
      while (accept_punct(","));
      expect_punct("]");
      return v;
    }
    std::vector<Token> elems;
    bool any_float = false;
    do {
      if (tok_.kind != Tok::Number &&
          !(tok_.kind == Tok::Ident && (tok_.text == "nan" || tok_.text == "inf")))
        fail("expected a number in the list");
      any_float = any_float || is_float_spelling(tok_.text);
      elems.push_back(take());
    } while (accept_punct(","));
    expect_punct("]");
    if (any_float) {
      std::vector<double> floats;
      for (const Token& e : elems) floats.push_back(to_float(e));
      return floats;
    }
    std::vector<int64_t> ints;
    for (const Token& e : elems) ints.push_back(to_integer(e));
    return ints;
  }
  Attrs attrs() {
    Attrs a;
    if (!accept_punct("{")) return a;
    if (accept_punct("}")) return a;
    do {
      Token at = tok_;
      std::string key = name_or_string();
      if (a.has(key)) fail_at(at, fmt::format("attribute '{}' is given twice", key));
      expect_punct("=");
      a.set(key, attr_value());
    } while (accept_punct(","));
    expect_punct("}");
    return a;
  }

  // ---- values, declarations, nodes
  Value* operand() {
    if (at_absent()) {
      take();
      return nullptr;
    }
    if (tok_.kind != Tok::ValueName) fail("expected a value (%NAME) or _");
    Value* v = g_->find_value(tok_.text);
    if (!v) fail_at(tok_, fmt::format("use of undefined value %{}", tok_.text));
    take();
    return v;
  }
  void check_new_name(const Token& at) const {
    if (g_->find_value(at.text)) fail_at(at, fmt::format("redefinition of value %{}", at.text));
  }
  void declaration() {
    Role role = *parse_role(take().text);
    if (tok_.kind != Tok::ValueName) fail("expected a value name (%NAME)");
    Token name = take();
    check_new_name(name);
    expect_punct(":");
    TensorType type = tensor_type();
    if (accept_punct("=")) {
      g_->add_parameter(name.text, tensor_data(type), role);
    } else if (role == Role::Input || role == Role::Label) {
      g_->add_input(name.text, type, role);
    } else {
      fail_at(name, fmt::format("{} %{} needs data (= [...])", role_name(role), name.text));
    }
  }
  void node() {
    std::vector<Token> results;
    if (tok_.kind != Tok::Ident || !parse_op(tok_.text)) {
      do {
        if (tok_.kind != Tok::ValueName && !at_absent()) fail("expected a result (%NAME or _) or an op");
        results.push_back(take());
      } while (accept_punct(","));
      expect_punct("=");
    }
    Token op_tok = tok_;
    if (tok_.kind != Tok::Ident) fail("expected an op name");
    auto op = parse_op(tok_.text);
    if (!op) fail(fmt::format("unknown op '{}'", tok_.text));
    take();
    expect_punct("(");
    std::vector<Value*> inputs;
    if (!accept_punct(")")) {
      do inputs.push_back(operand());
      while (accept_punct(","));
      expect_punct(")");
    }
    Attrs attributes = attrs();
    expect_punct(":");
    std::vector<std::pair<Token, std::optional<TensorType>>> types;
    std::vector<Role> roles;
    for (size_t i = 0; i < results.size(); ++i) {
      if (i) expect_punct(",");
      Token at = tok_;
      Role role = Role::Activation;
      std::optional<TensorType> type;
      if (at_absent()) {
        take();
      } else {
        if (tok_.kind == Tok::Ident && parse_role(tok_.text)) role = *parse_role(take().text);
        type = tensor_type();
      }
      types.emplace_back(at, type);
      roles.push_back(role);
    }
    expect_ident("loc");
    expect_punct("(");
    Token loc = tok_;
    std::string node_name = string();
    expect_punct(")");
    if (node_name.empty()) fail_at(loc, "node names cannot be empty");
    if (!node_names_.insert(node_name).second)
      fail_at(loc, fmt::format("duplicate node name '{}'", node_name));

    std::vector<std::string> names;
    std::vector<TensorType> out_types;
    for (size_t i = 0; i < results.size(); ++i) {
      bool absent = results[i].kind == Tok::Ident;
      if (absent != !types[i].second)
        fail_at(types[i].first, fmt::format("result {} is {} but its type is {}", i,
                                            absent ? "absent" : "present", absent ? "given" : "absent"));
      if (absent && i == 0) fail_at(results[i], "the first result cannot be absent");
      if (!absent) {
        check_new_name(results[i]);
        for (size_t j = 0; j < i; ++j)
          if (results[j].kind != Tok::Ident && results[j].text == results[i].text)
            fail_at(results[i], fmt::format("redefinition of value %{}", results[i].text));
      }
      names.push_back(absent ? "" : results[i].text);
      out_types.push_back(types[i].second.value_or(TensorType{}));
    }

    Node probe{*op, node_name, inputs, {}, attributes};
    std::vector<TensorType> inferred;
    try {
      inferred = infer_types(probe, int(results.size()));
    } catch (const Error& e) {
      fail_at(op_tok, e.what());
    }
    for (size_t i = 0; i < results.size(); ++i)
      if (types[i].second && *types[i].second != inferred[i])
        fail_at(types[i].first, fmt::format("type of %{} is {} but inference gives {}", results[i].text,
                                            types[i].second->str(), inferred[i].str()));
    Node* n = g_->add_node_typed(*op, std::move(inputs), std::move(attributes), names, out_types, node_name);
    for (size_t i = 0; i < n->outputs.size(); ++i)
      if (n->outputs[i]) n->outputs[i]->role = roles[i];
  }

  Lexer lex_;
  Token tok_;
  std::unique_ptr<Graph> g_;
  std::set<std::string> node_names_;
};

}  // namespace

std::unique_ptr<Graph> parse_graph(std::string_view text, const std::string& file, int first_line) {
  return Parser(text, file, first_line).parse();
}

std::unique_ptr<Graph> parse_graph_file(const std::string& path) {
  return parse_graph(read_file(path), path);
}

std::vector<TextChunk> split_chunks(std::string_view text) {
  std::vector<TextChunk> chunks(1);
  int line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    size_t next = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view l = text.substr(pos, next - pos);
    std::string_view trimmed = l.substr(0, l.find_last_not_of(" \t\r\n") + 1);
    ++line;
    if (trimmed == "// -----") {
      chunks.push_back({"", line});
    } else {
      chunks.back().text += l;
    }
    pos = next;
  }
  return chunks;
}

}  // namespace dlc::ir
