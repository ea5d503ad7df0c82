# Stand-in for the official postgres image, built by build.sh: Debian's postgresql, no cluster made at
# install; postgres-entrypoint.sh makes one in $PGDATA on the first start, as the official image does.
ARG BASE
FROM ${BASE}
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main-cluster.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(ls -d /usr/lib/postgresql/*/bin)" /usr/local/lib/postgresql-bin
ENV PATH=/usr/local/lib/postgresql-bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/postgresql/data
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
