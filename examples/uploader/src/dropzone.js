// The chat stand-in's drag-and-drop upload component: Dropzone from npm,
// as chat pages use such components. mountUploader(el, clickable, done)
// makes el a drop zone whose clickable element (the paperclip) opens
// Dropzone's own hidden <input type=file>; each file it takes is uploaded
// at once to /api/upload (multipart, field "file") and done(result) gets
// the server's [{id, name, size}] for it.
import Dropzone from "dropzone";

Dropzone.autoDiscover = false;

window.mountUploader = (el, clickable, done, failed) => {
  const dz = new Dropzone(el, {
    url: "/api/upload",
    paramName: "file",
    clickable,
    disablePreviews: true, // the page draws its own chips
    maxFilesize: 32, // MiB, as the server takes
    parallelUploads: 1,
  });
  dz.on("success", (file, res) => done(res));
  dz.on("error", (file, msg) => failed(typeof msg === "string" ? msg : (msg && msg.error) || "upload failed"));
  return dz;
};
