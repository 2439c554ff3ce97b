//===- OutputFile.cpp - writing outputs without losing files --------------===//

#include "tgc/Support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"

#include <csignal>

using namespace tgc;

void tgc::reportFileSizeLimitAsError() { ::signal(SIGXFSZ, SIG_IGN); }

static llvm::Error makeError(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "cannot write '" + path + "': " + message);
}

llvm::Expected<std::unique_ptr<OutputFile>>
OutputFile::open(llvm::StringRef path) {
  std::unique_ptr<OutputFile> file(new OutputFile());
  file->path = path.str();
  if (path == "-") {
    file->toStdout = true;
    return std::move(file);
  }
  llvm::sys::fs::file_status status;
  bool special = !llvm::sys::fs::status(path, status) &&
                 llvm::sys::fs::exists(status) &&
                 !llvm::sys::fs::is_regular_file(status);
  std::error_code ec;
  if (special) {
    file->stream = std::make_unique<llvm::raw_fd_ostream>(path, ec);
  } else {
    // Beside the destination, so that the rename stays on one file system.
    int fd;
    llvm::SmallString<256> temporary;
    ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, temporary);
    if (!ec) {
      file->temporary = std::string(temporary);
      file->stream =
          std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
    }
  }
  if (ec) {
    if (file->stream)
      file->stream->clear_error();
    return makeError(path, ec.message());
  }
  return std::move(file);
}

llvm::Error tgc::checkWritable(llvm::StringRef path) {
  if (path == "-")
    return llvm::Error::success();
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status)) {
    if (llvm::sys::fs::is_directory(status))
      return makeError(path, "it is a directory");
    if (!llvm::sys::fs::is_regular_file(status))
      return llvm::Error::success();
  }
  llvm::Expected<std::unique_ptr<OutputFile>> probe = OutputFile::open(path);
  return probe ? llvm::Error::success() : probe.takeError();
}

OutputFile::~OutputFile() {
  if (stream) {
    // A write error not reported through commit() must not abort.
    stream->close();
    stream->clear_error();
  }
  if (!committed && !temporary.empty())
    llvm::sys::fs::remove(temporary);
}

llvm::raw_ostream &OutputFile::os() {
  if (toStdout)
    return llvm::outs();
  return *stream;
}

llvm::Error OutputFile::commit() {
  if (toStdout) {
    llvm::outs().flush();
    committed = true;
    if (!llvm::outs().has_error())
      return llvm::Error::success();
    std::string message = llvm::outs().error().message();
    llvm::outs().clear_error();
    return makeError("<stdout>", message);
  }
  stream->close();
  if (stream->has_error()) {
    std::string message = stream->error().message();
    stream->clear_error();
    return makeError(path, message);
  }
  if (!temporary.empty())
    if (std::error_code ec = llvm::sys::fs::rename(temporary, path))
      return makeError(path, ec.message());
  committed = true;
  return llvm::Error::success();
}

llvm::Error
tgc::writeOutput(llvm::StringRef path,
                 llvm::function_ref<void(llvm::raw_ostream &)> write) {
  llvm::Expected<std::unique_ptr<OutputFile>> file = OutputFile::open(path);
  if (!file)
    return file.takeError();
  write((*file)->os());
  return (*file)->commit();
}

llvm::Error tgc::commitAll(llvm::ArrayRef<std::unique_ptr<OutputFile>> files) {
  for (const std::unique_ptr<OutputFile> &file : files)
    if (llvm::Error error = file->commit())
      return error;
  return llvm::Error::success();
}

llvm::Error tgc::checkOutputIsNoInput(llvm::StringRef output,
                                      llvm::ArrayRef<std::string> inputs,
                                      llvm::StringRef option) {
  if (output == "-")
    return llvm::Error::success();
  llvm::sys::fs::file_status outputStatus;
  if (llvm::sys::fs::status(output, outputStatus) ||
      !llvm::sys::fs::is_regular_file(outputStatus))
    return llvm::Error::success();
  for (const std::string &input : inputs) {
    llvm::sys::fs::file_status inputStatus;
    if (input == "-" || llvm::sys::fs::status(input, inputStatus))
      continue;
    if (llvm::sys::fs::equivalent(outputStatus, inputStatus))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          option + " '" + output + "' is the input '" + input +
              "': writing it would replace the input; choose another file");
  }
  return llvm::Error::success();
}
