;;; emacs_jsonrpc.el --- speak LSP to `atom-contracts server' from Emacs's jsonrpc.el  -*- lexical-binding: t -*-
;; eglot is built on jsonrpc.el (in Emacs since 27); Emacs 28, where eglot is not built in,
;; still has the library, so this drives the server the way eglot does:
;;   emacs --batch -l docs/editors/emacs_jsonrpc.el FILE.py
;; Prints one line per diagnostic pushed for FILE.py and exits 0; exits 1 on a timeout.
(require 'jsonrpc)
(let* ((file (expand-file-name (car command-line-args-left)))
       (root (locate-dominating-file file "pyproject.toml"))
       (uri (concat "file://" file))
       (command (split-string (or (getenv "ATOM_CONTRACTS_SERVER") "atom-contracts server")))
       (got nil)
       (conn (make-instance
              'jsonrpc-process-connection
              :name "atom-contracts"
              :process (make-process :name "atom-contracts" :command command
                                     :connection-type 'pipe :coding 'utf-8-emacs-unix
                                     :noquery t :stderr (get-buffer-create "*stderr*"))
              :notification-dispatcher
              (lambda (_conn method params)
                (when (and (eq method 'textDocument/publishDiagnostics)
                           (equal (plist-get params :uri) uri))
                  (setq got (append (plist-get params :diagnostics) nil))))
              :request-dispatcher (lambda (_conn _method _params) nil))))
  (jsonrpc-request conn :initialize
                   (list :processId (emacs-pid)
                         :rootUri (concat "file://" (directory-file-name (expand-file-name root)))
                         :capabilities '(:textDocument (:publishDiagnostics (:versionSupport t)))))
  (jsonrpc-notify conn :initialized (make-hash-table))
  (jsonrpc-notify conn :textDocument/didOpen
                  (list :textDocument
                        (list :uri uri :languageId "python" :version 1
                              :text (with-temp-buffer (insert-file-contents file) (buffer-string)))))
  (let ((deadline (+ (float-time) 20)))
    (while (and (null got) (< (float-time) deadline))
      (accept-process-output nil 0.05)))
  (dolist (d got)
    (let ((start (plist-get (plist-get d :range) :start)))
      (princ (format "diagnostic %d:%d %s %s\n"
                     (1+ (plist-get start :line)) (1+ (plist-get start :character))
                     (plist-get d :code) (plist-get d :message)))))
  (jsonrpc-request conn :shutdown nil)
  (jsonrpc-notify conn :exit nil)
  (kill-emacs (if got 0 1)))
