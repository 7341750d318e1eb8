module {
  func.func @nothing_on_the_device() {
    return
  }
}
