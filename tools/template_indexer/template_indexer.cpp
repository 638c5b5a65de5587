// template_indexer: reads the skeleton contracts of the CUDA templates (contract.cuh) with Clang's
// libTooling and writes the registry the code generator checks its instantiations against
// (compiler/include/ranc/codegen/template_registry.h describes the format).
//
//   template_indexer --include-dir templates/include --cuda-path /usr/local/cuda
//                    --resource-dir /usr/lib/llvm-22/lib/clang/22
//                    --output template_registry.txt [--cpp template_registry.gen.cpp]
//
// Every header under INCLUDE/ranc/templates is parsed as one CUDA translation unit for the device
// (sm_90, the CUDA toolkit's own headers through clang's CUDA wrapper), as NVRTC sees them. A
// header whose contract is malformed is an error naming the header, the skeleton and the hook;
// then nothing is written. Outputs are rewritten only when their content changes, so an edit of a
// header that does not change any contract rebuilds nothing that depends on the registry.
#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Basic/Version.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ranc/codegen/template_registry.h"

namespace fs = std::filesystem;
using namespace clang;
using ranc::codegen::canonical_type;

namespace {

struct Options {
  std::string include_dir, cuda_path, resource_dir, output, cpp, arch = "sm_90";
};

// One skeleton as read from its header; printed as registry records.
struct SkeletonOut {
  std::string name, header;
  std::vector<std::string> lines;
};

class Indexer {
 public:
  Indexer(ASTContext& ctx, std::string include_dir)
      : ctx_(ctx), include_dir_(std::move(include_dir)), pp_(ctx.getPrintingPolicy()) {
    pp_.Bool = true;
    pp_.SuppressScope = true;
    pp_.SuppressTagKeyword = true;
    pp_.FullyQualifiedName = false;
  }

  void run() {
    for (Decl* d : ctx_.getTranslationUnitDecl()->decls())
      if (auto* ns = dyn_cast<NamespaceDecl>(d); ns && ns->getName() == "ranc")
        for (Decl* d2 : ns->decls())
          if (auto* tpl = dyn_cast<NamespaceDecl>(d2); tpl && tpl->getName() == "tpl")
            for (Decl* d3 : tpl->decls()) index_decl(d3);
  }

  const std::vector<SkeletonOut>& skeletons() const { return skeletons_; }
  const std::vector<std::string>& functors() const { return functors_; }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  // "ranc/templates/select.cuh:63" for a location in a template header.
  std::string where(SourceLocation loc) const {
    const SourceManager& sm = ctx_.getSourceManager();
    PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(loc));
    if (p.isInvalid()) return "<unknown>";
    return header_of(p.getFilename()) + ":" + std::to_string(p.getLine());
  }
  std::string header_of(std::string_view file) const {
    std::error_code ec;
    fs::path rel = fs::relative(fs::path(std::string(file)), include_dir_, ec);
    if (ec || rel.empty() || *rel.begin() == "..") return std::string(file);
    return rel.generic_string();
  }
  std::string header_at(SourceLocation loc) const {
    const SourceManager& sm = ctx_.getSourceManager();
    PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(loc));
    return p.isInvalid() ? "<unknown>" : header_of(p.getFilename());
  }
  void error(SourceLocation loc, const std::string& what) {
    errors_.push_back(where(loc) + ": " + what);
  }

  // The type as the generator writes it: typedefs resolved, template parameters and type
  // variables (declared, never defined structs) by name.
  std::string type_text(QualType t, std::set<std::string>* type_vars = nullptr) const {
    std::string cv = t.isLocalConstQualified() ? "const " : "";
    const Type* ty = t.getTypePtr();
    std::string s;
    if (auto* r = dyn_cast<LValueReferenceType>(ty)) {
      s = type_text(r->getPointeeTypeAsWritten(), type_vars) + " &";
    } else if (auto* rr = dyn_cast<RValueReferenceType>(ty)) {
      s = type_text(rr->getPointeeTypeAsWritten(), type_vars) + " &&";
    } else if (auto* p = dyn_cast<PointerType>(ty)) {
      s = type_text(p->getPointeeType(), type_vars) + " *";
    } else if (auto* tp = dyn_cast<TemplateTypeParmType>(ty)) {
      s = tp->getDecl() ? tp->getDecl()->getName().str() : QualType(ty, 0).getAsString(pp_);
    } else if (auto* b = dyn_cast<BuiltinType>(ty)) {
      s = b->getName(pp_).str();
    } else if (auto* rt = dyn_cast<RecordType>(ty);
               rt && !isa<ClassTemplateSpecializationDecl>(rt->getDecl())) {
      const RecordDecl* rd = rt->getDecl();
      s = rd->getName().str();
      if (!rd->getDefinition() && type_vars) type_vars->insert(s);
    } else if (auto* et = dyn_cast<EnumType>(ty)) {
      s = et->getDecl()->getName().str();
    } else if (auto* td = dyn_cast<TypedefType>(ty);
               td && td->getDecl()->getDeclContext() == skeleton_) {
      s = td->getDecl()->getName().str();  // the skeleton's own names (TempStorage) as written
    } else if (QualType d = QualType(ty, 0).getSingleStepDesugaredType(ctx_);
               d != QualType(ty, 0)) {
      return canonical_type(cv + type_text(d, type_vars));  // typedefs, aliases
    } else {
      s = QualType(ty, 0).getAsString(pp_);
    }
    return canonical_type(cv + s);
  }

  std::string signature_fields(const FunctionDecl* f, std::set<std::string>* type_vars) const {
    std::string s = type_text(f->getReturnType(), type_vars);
    for (const ParmVarDecl* p : f->parameters())
      s += "\t" + type_text(p->getType(), type_vars) + "|" + p->getName().str();
    return s;
  }

  std::string tparam_fields(const NamedDecl* p, const std::string& kind_override = "") const {
    if (auto* nt = dyn_cast<NonTypeTemplateParmDecl>(p)) {
      return p->getName().str() + "\tvalue\t" + type_text(nt->getType()) +
             (nt->hasDefaultArgument() ? "\tdefault" : "");
    }
    auto* tt = cast<TemplateTypeParmDecl>(p);
    std::string kind = !kind_override.empty()     ? kind_override
                       : p->getName() == "Policy" ? "policy"
                                                  : "type";
    return p->getName().str() + "\t" + kind + "\t" + (tt->hasDefaultArgument() ? "\tdefault" : "");
  }

  void index_decl(Decl* d) {
    const CXXRecordDecl* rd = nullptr;
    const TemplateParameterList* tparams = nullptr;
    if (auto* ct = dyn_cast<ClassTemplateDecl>(d)) {
      rd = ct->getTemplatedDecl();
      tparams = ct->getTemplateParameters();
    } else if (auto* r = dyn_cast<CXXRecordDecl>(d);
               r && !isa<ClassTemplateSpecializationDecl>(r)) {
      rd = r;
    }
    if (!rd || !rd->isThisDeclarationADefinition() || rd->getName().empty()) return;
    const CXXRecordDecl* hooks = nullptr;
    for (Decl* m : rd->decls())
      if (auto* h = dyn_cast<CXXRecordDecl>(m);
          h && h->getName() == "Hooks" && h->isThisDeclarationADefinition())
        hooks = h;
    if (hooks) {
      index_skeleton(rd, tparams, hooks);
    } else if (rd->getName().ends_with("Agent")) {
      error(rd->getLocation(),
            rd->getName().str() +
                ": a skeleton (a struct named *Agent) must declare its hooks in a "
                "nested `struct Hooks` (contract.cuh)");
    } else if (!tparams) {
      index_functor(rd);
    }
  }

  // A stock hook: a non-template struct whose only member function is a call operator.
  void index_functor(const CXXRecordDecl* rd) {
    const CXXMethodDecl* call = nullptr;
    int methods = 0;
    for (Decl* m : rd->decls()) {
      if (isa<FunctionTemplateDecl>(m)) return;
      if (auto* md = dyn_cast<CXXMethodDecl>(m); md && !md->isImplicit()) {
        ++methods;
        if (md->getOverloadedOperator() == OO_Call) call = md;
      }
    }
    if (call && methods == 1)
      functors_.push_back("functor\t" + rd->getName().str() + "\t" +
                          signature_fields(call, nullptr));
  }

  // Is parameter `p` of entry template `ft` a hook (its type is one of ft's type parameters)?
  static const TemplateTypeParmDecl* hook_param(const FunctionTemplateDecl* ft,
                                                const ParmVarDecl* p) {
    QualType t = p->getType().getNonReferenceType().getUnqualifiedType();
    auto* tp = dyn_cast<TemplateTypeParmType>(t.getTypePtr());
    if (!tp) return nullptr;
    for (const NamedDecl* nd : *ft->getTemplateParameters())
      if (nd == tp->getDecl()) return cast<TemplateTypeParmDecl>(nd);
    return nullptr;
  }

  struct HookDecl {
    SourceLocation loc;
    bool object = false;
    size_t arity = 0;                       // callable
    std::map<std::string, size_t> methods;  // object: member function -> arity
    bool taken = false;
  };

  // Checks that the entry calls each hook as its declaration says (number of arguments).
  class CallChecker : public RecursiveASTVisitor<CallChecker> {
   public:
    CallChecker(Indexer& ix, const std::string& where,
                std::map<const ParmVarDecl*, std::string> hooks,
                const std::map<std::string, HookDecl>& decls)
        : ix_(ix), where_(where), hooks_(std::move(hooks)), decls_(decls) {}
    bool VisitCallExpr(CallExpr* c) {
      const Expr* callee = c->getCallee()->IgnoreParenImpCasts();
      if (auto* dre = dyn_cast<DeclRefExpr>(callee)) {
        check(dre->getDecl(), "", c->getNumArgs(), c->getBeginLoc());
      } else if (auto* dm = dyn_cast<CXXDependentScopeMemberExpr>(callee)) {
        if (!dm->isImplicitAccess())
          if (auto* base = dyn_cast<DeclRefExpr>(dm->getBase()->IgnoreParenImpCasts()))
            check(base->getDecl(), dm->getMember().getAsString(), c->getNumArgs(),
                  c->getBeginLoc());
      } else if (auto* me = dyn_cast<MemberExpr>(callee)) {
        if (auto* base = dyn_cast<DeclRefExpr>(me->getBase()->IgnoreParenImpCasts()))
          check(base->getDecl(), me->getMemberDecl()->getName().str(), c->getNumArgs(),
                c->getBeginLoc());
      }
      return true;
    }

   private:
    void check(const ValueDecl* d, const std::string& member, unsigned args, SourceLocation loc) {
      auto* p = dyn_cast<ParmVarDecl>(d);
      auto it = p ? hooks_.find(p) : hooks_.end();
      if (it == hooks_.end()) return;
      const HookDecl& h = decls_.at(it->second);
      if (member.empty()) {
        if (h.object)
          ix_.error(loc, where_ + " calls the object hook '" + it->second + "' like a function");
        else if (args != h.arity)
          ix_.error(loc, where_ + " calls hook '" + it->second + "' with " + std::to_string(args) +
                             " arguments; Hooks::" + it->second + " declares " +
                             std::to_string(h.arity));
        return;
      }
      auto m = h.methods.find(member);
      if (!h.object || m == h.methods.end())
        ix_.error(loc, where_ + " calls '" + it->second + "." + member +
                           "', which Hooks::" + it->second + " does not declare");
      else if (args != m->second)
        ix_.error(loc, where_ + " calls hook '" + it->second + "." + member + "' with " +
                           std::to_string(args) + " arguments; its declaration has " +
                           std::to_string(m->second));
    }
    Indexer& ix_;
    std::string where_;
    std::map<const ParmVarDecl*, std::string> hooks_;
    const std::map<std::string, HookDecl>& decls_;
  };

  // The fields of a LaunchRule initializer: grid enumerator, items, block threads.
  bool launch_fields(const VarDecl* v, std::string& out) {
    const Expr* init = v->getInit();
    if (!init) return false;
    init = init->IgnoreImplicit();
    std::vector<const Expr*> args;
    if (auto* il = dyn_cast<InitListExpr>(init)) {
      if (il->getSyntacticForm()) il = il->getSyntacticForm();
      for (const Expr* e : il->inits()) args.push_back(e);
    } else if (auto* pl = dyn_cast<ParenListExpr>(init)) {
      for (unsigned k = 0; k < pl->getNumExprs(); ++k) args.push_back(pl->getExpr(k));
    } else if (auto* ce = dyn_cast<CXXConstructExpr>(init)) {
      for (const Expr* e : ce->arguments()) args.push_back(e);
    }
    if (args.size() != 3) return false;
    auto* grid = dyn_cast<DeclRefExpr>(args[0]->IgnoreImplicit());
    auto* items = dyn_cast<StringLiteral>(args[1]->IgnoreImplicit());
    if (!grid || !isa<EnumConstantDecl>(grid->getDecl()) || !items) return false;
    std::string threads;
    const Expr* t = args[2]->IgnoreImplicit();
    Expr::EvalResult r;
    if (!t->isValueDependent() && t->EvaluateAsInt(r, ctx_)) {
      threads = std::to_string(r.Val.getInt().getExtValue());
    } else if (auto* dre = dyn_cast<DeclRefExpr>(t);
               dre && isa<NonTypeTemplateParmDecl>(dre->getDecl())) {
      threads = dre->getDecl()->getName().str();
    } else {
      llvm::raw_string_ostream os(threads);
      t->printPretty(os, nullptr, pp_);
    }
    out = grid->getDecl()->getName().str() + "\t" + items->getString().str() + "\t" +
          canonical_type(threads);
    return true;
  }

  void index_skeleton(const CXXRecordDecl* rd, const TemplateParameterList* tparams,
                      const CXXRecordDecl* hooks) {
    const std::string name = rd->getName().str();
    skeleton_ = rd;
    SkeletonOut out{name, header_at(rd->getLocation()), {}};
    std::set<std::string> type_vars;

    // Hooks: member functions (callable hooks) and data members (object hooks).
    std::map<std::string, HookDecl> decls;
    std::vector<std::string> hook_lines;
    for (Decl* m : hooks->decls()) {
      if (auto* md = dyn_cast<CXXMethodDecl>(m); md && !md->isImplicit()) {
        if (decls.count(md->getName().str()))
          error(md->getLocation(), name + "::Hooks declares '" + md->getName().str() + "' twice");
        decls[md->getName().str()] =
            HookDecl{md->getLocation(), false, md->getNumParams(), {}, false};
        hook_lines.push_back("hook\t" + md->getName().str() + "\t" +
                             signature_fields(md, &type_vars));
      } else if (auto* fd = dyn_cast<FieldDecl>(m)) {
        const CXXRecordDecl* obj = fd->getType()->getAsCXXRecordDecl();
        if (!obj || !obj->getDefinition()) {
          error(fd->getLocation(), name + "::Hooks::" + fd->getName().str() +
                                       ": an object hook's type must be a defined struct");
          continue;
        }
        HookDecl h{fd->getLocation(), true, 0, {}, false};
        hook_lines.push_back("object\t" + fd->getName().str());
        for (Decl* om : obj->getDefinition()->decls()) {
          if (auto* td = dyn_cast<TypedefNameDecl>(om))
            hook_lines.push_back("otype\t" + fd->getName().str() + "\t" + td->getName().str() +
                                 "\t" + type_text(td->getUnderlyingType(), &type_vars));
          else if (auto* nested = dyn_cast<CXXRecordDecl>(om); nested && !nested->isImplicit())
            hook_lines.push_back("otype\t" + fd->getName().str() + "\t" + nested->getName().str() +
                                 "\t" + type_text(ctx_.getCanonicalTagType(nested), &type_vars));
          else if (auto* om2 = dyn_cast<CXXMethodDecl>(om); om2 && !om2->isImplicit()) {
            h.methods[om2->getName().str()] = om2->getNumParams();
            hook_lines.push_back("omethod\t" + fd->getName().str() + "\t" + om2->getName().str() +
                                 "\t" + signature_fields(om2, &type_vars));
          }
        }
        decls[fd->getName().str()] = h;
      }
    }
    if (decls.empty()) error(hooks->getLocation(), name + "::Hooks declares no hook");

    // Launch rules by entry name.
    std::map<std::string, const VarDecl*> launches;
    for (Decl* m : rd->decls())
      if (auto* v = dyn_cast<VarDecl>(m);
          v && v->isStaticDataMember() && v->getName().ends_with("_launch"))
        launches[v->getName().drop_back(7).str()] = v;

    // Entry points: public static member function templates taking hooks.
    std::vector<std::string> entry_lines;
    std::set<std::string> entries;
    for (Decl* m : rd->decls()) {
      auto* ft = dyn_cast<FunctionTemplateDecl>(m);
      if (!ft || ft->getAccess() == AS_private || ft->getAccess() == AS_protected) continue;
      auto* md = dyn_cast<CXXMethodDecl>(ft->getTemplatedDecl());
      if (!md || !md->isStatic()) continue;
      std::map<const ParmVarDecl*, std::string> hook_params;
      std::set<const TemplateTypeParmDecl*> hook_tparams;
      for (const ParmVarDecl* p : md->parameters())
        if (auto* tp = hook_param(ft, p)) {
          hook_params[p] = p->getName().str();
          hook_tparams.insert(tp);
        }
      if (hook_params.empty()) continue;
      const std::string entry = md->getName().str();
      const std::string where = name + "::" + entry;
      if (!entries.insert(entry).second) {
        error(md->getLocation(), where + " is overloaded; an entry point must have one signature");
        continue;
      }
      auto launch = launches.find(entry);
      std::string launch_text;
      if (launch == launches.end())
        error(md->getLocation(), where + " has no launch rule (static constexpr LaunchRule " +
                                     entry + "_launch, contract.cuh)");
      else if (!launch_fields(launch->second, launch_text))
        error(launch->second->getLocation(),
              name + "::" + entry + "_launch: expected LaunchRule{Grid::..., \"items\", threads}");
      entry_lines.push_back("entry\t" + entry + "\t" + launch_text);
      for (const NamedDecl* tp : *ft->getTemplateParameters()) {
        auto* ttp = dyn_cast<TemplateTypeParmDecl>(tp);
        entry_lines.push_back("etparam\t" + entry + "\t" +
                              tparam_fields(tp, ttp && hook_tparams.count(ttp) ? "hook" : ""));
      }
      for (const ParmVarDecl* p : md->parameters()) {
        const bool is_hook = hook_params.count(p) > 0;
        if (is_hook) {
          auto d = decls.find(p->getName().str());
          if (d == decls.end()) {
            error(p->getLocation(), where + " takes hook '" + p->getName().str() +
                                        "' (template parameter " + type_text(p->getType()) +
                                        ") but " + name + "::Hooks declares no signature for it");
          } else {
            d->second.taken = true;
          }
        }
        std::string flags = is_hook && p->hasDefaultArg() ? "hook,default"
                            : is_hook                     ? "hook"
                            : p->hasDefaultArg()          ? "default"
                                                          : "-";
        entry_lines.push_back("eparam\t" + entry + "\t" + p->getName().str() + "\t" +
                              type_text(p->getType()) + "\t" + flags);
      }
      std::map<const ParmVarDecl*, std::string> declared;
      for (const auto& [p, hook] : hook_params)
        if (decls.count(hook)) declared[p] = hook;
      if (md->hasBody()) CallChecker(*this, where, declared, decls).TraverseStmt(md->getBody());
    }
    for (const auto& [hook, d] : decls)
      if (!d.taken)
        error(d.loc, name + "::Hooks declares hook '" + hook + "' but no entry point of " + name +
                         " takes it");
    for (const auto& [entry, v] : launches)
      if (!entries.count(entry))
        error(v->getLocation(),
              name + "::" + entry + "_launch: " + name + " has no entry point '" + entry + "'");
    if (entries.empty())
      error(rd->getLocation(),
            name + " declares Hooks but no public static member function takes hooks");

    // Template parameters: policy, value types, values; hooks belong to the entry points.
    if (tparams)
      for (const NamedDecl* tp : *tparams) out.lines.push_back("tparam\t" + tparam_fields(tp));
    for (Decl* m : rd->decls()) {
      if (auto* nd = dyn_cast<NamedDecl>(m); nd && (nd->getName() == "TempStorage")) {
        out.lines.push_back("temp\tTempStorage");
      } else if (auto* ct = dyn_cast<ClassTemplateDecl>(m); ct && ct->getName() == "TempStorageT") {
        std::string line = "temp\tTempStorageT";
        for (const NamedDecl* p : *ct->getTemplateParameters()) line += "\t" + p->getName().str();
        out.lines.push_back(line);
      }
    }
    for (const std::string& v : type_vars) out.lines.push_back("typevar\t" + v);
    out.lines.insert(out.lines.end(), hook_lines.begin(), hook_lines.end());
    out.lines.insert(out.lines.end(), entry_lines.begin(), entry_lines.end());
    skeletons_.push_back(std::move(out));
  }

  ASTContext& ctx_;
  std::string include_dir_;
  PrintingPolicy pp_;
  const CXXRecordDecl* skeleton_ = nullptr;  // the skeleton being indexed
  std::vector<SkeletonOut> skeletons_;
  std::vector<std::string> functors_;
  std::vector<std::string> errors_;
};

class IndexAction : public ASTFrontendAction {
 public:
  IndexAction(std::string include_dir, std::string& text, std::vector<std::string>& errors)
      : include_dir_(std::move(include_dir)), text_(text), errors_(errors) {}

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance&, StringRef) override {
    struct Consumer : ASTConsumer {
      IndexAction& a;
      explicit Consumer(IndexAction& a) : a(a) {}
      void HandleTranslationUnit(ASTContext& ctx) override { a.index(ctx); }
    };
    return std::make_unique<Consumer>(*this);
  }

 private:
  void index(ASTContext& ctx) {
    if (ctx.getDiagnostics().hasErrorOccurred()) return;
    Indexer ix(ctx, include_dir_);
    ix.run();
    errors_ = ix.errors();
    std::ostringstream os;
    os << "# ranc template registry: generated by tools/template_indexer (" << getClangFullVersion()
       << ") from the headers under ranc/templates; do not edit.\n";
    for (const SkeletonOut& s : ix.skeletons()) {
      os << "skeleton\t" << s.name << "\t" << s.header << "\n";
      for (const std::string& l : s.lines) os << l << "\n";
    }
    for (const std::string& f : ix.functors()) os << f << "\n";
    text_ = os.str();
  }
  std::string include_dir_;
  std::string& text_;
  std::vector<std::string>& errors_;
};

void write_if_changed(const std::string& path, const std::string& content) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream old;
    old << in.rdbuf();
    if (old.str() == content) return;
  }
  fs::path tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

std::string cpp_source(const std::string& text) {
  return "// Generated by tools/template_indexer from the CUDA templates; do not edit.\n"
         "#include \"ranc/codegen/template_registry.h\"\n\n"
         "namespace ranc::codegen {\n\n"
         "std::string_view builtin_template_registry_text() {\n"
         "  return R\"ranc_registry(" +
         text + ")ranc_registry\";\n}\n\n}  // namespace ranc::codegen\n";
}

int usage() {
  std::cerr << "usage: template_indexer --include-dir DIR --cuda-path DIR --resource-dir DIR "
               "--output FILE "
               "[--cpp FILE] [--arch sm_XX]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--include-dir")
      o.include_dir = value();
    else if (a == "--cuda-path")
      o.cuda_path = value();
    else if (a == "--resource-dir")
      o.resource_dir = value();
    else if (a == "--output")
      o.output = value();
    else if (a == "--cpp")
      o.cpp = value();
    else if (a == "--arch")
      o.arch = value();
    else
      return usage();
  }
  if (o.include_dir.empty() || o.output.empty() || o.resource_dir.empty()) return usage();

  const fs::path dir = fs::path(o.include_dir) / "ranc" / "templates";
  std::vector<std::string> headers;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".cuh") headers.push_back(e.path().filename().string());
  if (ec || headers.empty()) {
    std::cerr << "template_indexer: no headers (*.cuh) in " << dir.string() << "\n";
    return 1;
  }
  std::sort(headers.begin(), headers.end());
  std::string code;
  for (const std::string& h : headers) code += "#include <ranc/templates/" + h + ">\n";

  std::vector<std::string> args = {"-x",
                                   "cuda",
                                   "--cuda-device-only",
                                   "--cuda-gpu-arch=" + o.arch,
                                   "-nocudalib",
                                   "-std=c++17",
                                   "-Wno-unknown-cuda-version",
                                   "-resource-dir",
                                   o.resource_dir,
                                   "-I" + o.include_dir};
  if (!o.cuda_path.empty()) args.push_back("--cuda-path=" + o.cuda_path);

  std::string text;
  std::vector<std::string> errors;
  const std::string include_dir = fs::weakly_canonical(o.include_dir).string();
  const bool parsed =
      tooling::runToolOnCodeWithArgs(std::make_unique<IndexAction>(include_dir, text, errors), code,
                                     args, "ranc_templates_index.cu", "template_indexer");
  if (!parsed || (text.empty() && errors.empty())) {
    std::cerr << "template_indexer: " << getClangFullVersion()
              << " could not parse the templates under " << dir.string() << " in CUDA mode ("
              << o.arch << ", CUDA at " << (o.cuda_path.empty() ? "the default path" : o.cuda_path)
              << "); see the errors above\n";
    return 1;
  }
  if (!errors.empty()) {
    for (const std::string& e : errors) std::cerr << "template_indexer: " << e << "\n";
    std::cerr << "template_indexer: " << errors.size() << " malformed skeleton contract"
              << (errors.size() == 1 ? "" : "s")
              << " (templates/include/ranc/templates/contract.cuh)\n";
    return 1;
  }
  try {
    write_if_changed(o.output, text);
    if (!o.cpp.empty()) write_if_changed(o.cpp, cpp_source(text));
  } catch (const std::exception& e) {
    std::cerr << "template_indexer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
