# Shared by the HTTP benchmarks (sourced, not run).

# The top of an nginx.conf that keeps everything under $1 (pid, logs, temp files) and
# lets one keep-alive connection carry a whole run.
nginx_preamble() {
  cat <<CONF
worker_processes 1;
pid $1/nginx.pid;
error_log $1/logs/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path $1/tmp/body; proxy_temp_path $1/tmp/proxy;
  fastcgi_temp_path $1/tmp/fcgi; uwsgi_temp_path $1/tmp/uwsgi; scgi_temp_path $1/tmp/scgi;
  keepalive_requests 10000000;
CONF
}
